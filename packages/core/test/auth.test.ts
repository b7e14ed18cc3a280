import { hasPermission, parseScope } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'

describe('scope parsing', () => {
  it('splits on spaces and accepts only * and read', () => {
    expect(parseScope('read *')).toEqual({ ok: true, value: ['read', '*'] })
    expect(parseScope('')).toEqual({ ok: true, value: [] })
    expect(parseScope('read write').ok).toBe(false)
  })
})

describe('permissions', () => {
  it.each([
    [['*'], 'nodes.write', true],
    [['*'], 'anything.at.all', true],
    [['read'], 'nodes.read', true],
    [['read'], 'settings.read', true],
    [['read'], 'read', true],
    [['read'], 'nodes.write', false],
    [['write'], 'nodes.write', true],
    [['write'], 'nodes.read', false],
    [['nodes.read'], 'nodes.read', true],
    [['nodes.read'], 'settings.read', false],
    [['nodes.read'], 'nodes.write', false],
    [['nodes.read', 'nodes.write'], 'nodes.write', true],
    [['nodes.write'], '*', false],
    [['read'], '*', false],
    [[], 'nodes.read', false],
    [[], '', true],
    [['read,*'], 'nodes.read', false],
  ])('%o grants %j: %s', (granted, needed, expected) => {
    expect(hasPermission(granted, needed)).toBe(expected)
  })
})
