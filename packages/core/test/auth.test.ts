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
    // As Node-RED has them: `*.read` and `*.write` are `read` and `write`; a resource is at least
    // one character on one line; a list of needed permissions must all be covered.
    [['*.read'], 'flows.read', true],
    [['*.read'], 'read', true],
    [['*.read'], 'flows.write', false],
    [['*.write'], 'nodes.write', true],
    [['*.write'], 'nodes.read', false],
    [['read'], '.read', false],
    [['read'], 'a\nb.read', false],
    [['read'], 'a.b.read', true],
    [['flows.read', 'nodes.write'], ['flows.read', 'nodes.write'], true],
    [['flows.read'], ['flows.read', 'nodes.write'], false],
    [['flows.read'], [], true],
  ])('%o grants %j: %s', (granted, needed, expected) => {
    expect(hasPermission(granted, needed)).toBe(expected)
  })
})
