import { intersectPermissions } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'

describe('the rights a token has now: its scope ∩ its user’s permissions', () => {
  it.each([
    [['*'], ['*'], ['*']],
    [['*'], ['read'], ['read']],
    [['read'], ['*'], ['read']],
    [['*'], ['nodes.read', 'write'], ['nodes.read', 'write']],
    [['read'], ['nodes.read', 'flows.write'], ['nodes.read']],
    [['read'], ['write'], []],
    [['nodes.write'], ['write'], ['nodes.write']],
    [['nodes.read'], ['flows.read'], []],
    [['*'], [], []],
    [['read', 'write'], ['*'], ['read', 'write']],
  ])('%j ∩ %j = %j', (scope, user, expected) => {
    expect(intersectPermissions(scope, user)).toEqual(expected)
  })
})
