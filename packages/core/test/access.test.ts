import { describe, expect, it } from 'vitest'
import { grantProblem, grantWord, isRightsWord, parseRightsWord } from '../src/access/grants.js'
import { createMembership, groupNameProblem, patternMatcher } from '../src/access/groups.js'
import { AT_FLOWADMIN, createAccessRights } from '../src/access/rights.js'
import { BUILT_IN_ROLES, rolesOf } from '../src/access/roles.js'
import { hasPermission } from '../src/auth/permissions.js'

const at = (instance: string) => ({ kind: 'instance' as const, instance })
const groups = { 'line-1': ['press-*', 'nr-7'], 'line-2': ['weld-?'], test: [], prod: ['prod-*'] }

describe('roles', () => {
  it('has the four built-in roles, Node-RED permission words underneath', () => {
    const roles = rolesOf()
    expect([...roles.keys()]).toEqual(['viewer', 'deployer', 'palette-admin', 'admin'])
    expect(roles.get('viewer')?.permissions).toEqual(['read'])
    expect(roles.get('admin')?.permissions).toEqual(['*'])
    expect(roles.get('palette-admin')?.permissions).toEqual(['read', 'nodes.write'])
    // A deploy and the editor's buttons; never the palette.
    const deployer = BUILT_IN_ROLES.deployer ?? []
    for (const needed of ['flows.read', 'flows.write', 'inject.write', 'debug.write', 'library.write'])
      expect(hasPermission(deployer, needed)).toBe(true)
    expect(hasPermission(deployer, 'nodes.write')).toBe(false)
    expect(hasPermission(deployer, 'settings.write')).toBe(false)
  })

  it('takes roles from the settings, with a lifetime in seconds; one of a built-in name replaces it', () => {
    const roles = rolesOf({
      operator: { permissions: 'read', maxTokenLifetime: 60 },
      admin: { permissions: '*', maxTokenLifetime: 3600 },
    })
    expect(roles.get('operator')).toEqual({ name: 'operator', permissions: ['read'], maxAgeMs: 60_000 })
    expect(roles.get('admin')?.maxAgeMs).toBe(3_600_000)
  })

  it('refuses a malformed role', () => {
    expect(() => rolesOf({ 'bad name': { permissions: 'read' } })).toThrow(/Role name/)
    expect(() => rolesOf({ r: { permissions: 'deploy' } })).toThrow(/not a permission: deploy/)
    expect(() => rolesOf({ r: { permissions: 'read', maxTokenLifetime: 0 } })).toThrow(/maxTokenLifetime/)
  })
})

describe('grants as words', () => {
  it('writes a grant as a word, everywhere without a scope', () => {
    expect(grantWord({ role: 'viewer', on: 'everywhere' })).toBe('role:viewer')
    expect(grantWord({ role: 'deployer', on: 'line-1' })).toBe('role:deployer@line-1')
    expect(grantWord({ role: 'admin', on: 'flowadmin' })).toBe('role:admin@flowadmin')
  })

  it('reads permission words, scoped ones and roles; refuses anything else', () => {
    expect(parseRightsWord('read')).toEqual({ kind: 'permission', permission: 'read', scope: null })
    expect(parseRightsWord('flows.write@line-1')).toEqual({
      kind: 'permission',
      permission: 'flows.write',
      scope: 'line-1',
    })
    expect(parseRightsWord('role:deployer@test')).toEqual({ kind: 'role', role: 'deployer', scope: 'test' })
    for (const word of [
      'role:',
      'read@',
      'read@everywhere',
      'deploy',
      'role:a b',
      'read@line 1',
      'role:x@@y',
    ])
      expect(isRightsWord(word), word).toBe(false)
  })

  it('names an unknown role or group', () => {
    const known = { roles: rolesOf(), groups: new Set(['line-1']) }
    expect(grantProblem({ role: 'deployer', on: 'line-1' }, known)).toBeNull()
    expect(grantProblem({ role: 'viewer', on: 'everywhere' }, known)).toBeNull()
    expect(grantProblem({ role: 'viewer', on: 'flowadmin' }, known)).toBeNull()
    expect(grantProblem({ role: 'deployer', on: 'line-9' }, known)).toMatch(/unknown group line-9/)
    expect(grantProblem({ role: 'operator', on: 'line-1' }, known)).toMatch(/unknown role operator/)
  })
})

describe('groups', () => {
  it('matches whole ids: * any characters, ? one, anything else itself', () => {
    expect(patternMatcher('press-*')('press-12')).toBe(true)
    expect(patternMatcher('press-*')('xpress-12')).toBe(false)
    expect(patternMatcher('weld-?')('weld-1')).toBe(true)
    expect(patternMatcher('weld-?')('weld-12')).toBe(false)
    expect(patternMatcher('nr.7')('nrx7')).toBe(false)
    expect(patternMatcher('nr.7')('nr.7')).toBe(true)
  })

  it('puts an instance in every group whose rule or assignment holds it', () => {
    const membership = createMembership(groups, [{ group: 'test', instance: 'press-3', by: 'ops', at: 0 }])
    expect(membership.groupsOf('press-3')).toEqual(['line-1', 'test'])
    expect(membership.groupsOf('nr-7')).toEqual(['line-1'])
    expect(membership.groupsOf('nr-8')).toEqual([])
    expect(membership.groupsOf('weld-1')).toEqual(['line-2'])
  })

  it('ignores an assignment to a group the settings no longer declare', () => {
    const membership = createMembership({ test: [] }, [{ group: 'gone', instance: 'a', by: null, at: 0 }])
    expect(membership.groupsOf('a')).toEqual([])
  })

  it('works out again after a change of rules or assignments', () => {
    const membership = createMembership(groups)
    expect(membership.groupsOf('press-1')).toEqual(['line-1'])
    const before = membership.revision()
    membership.setRules({ 'line-1': ['nr-*'] })
    expect(membership.revision()).toBeGreaterThan(before)
    expect(membership.groupsOf('press-1')).toEqual([])
    membership.setAssignments([{ group: 'line-1', instance: 'press-1', by: null, at: 0 }])
    expect(membership.groupsOf('press-1')).toEqual(['line-1'])
  })

  it('keeps the two scopes out of group names', () => {
    expect(groupNameProblem('everywhere')).toMatch(/scope of its own/)
    expect(groupNameProblem('flowadmin')).toMatch(/scope of its own/)
    expect(groupNameProblem('line 1')).toMatch(/group name/)
    expect(groupNameProblem('line-1')).toBeNull()
  })
})

describe('rights at a place', () => {
  const rights = createAccessRights({ groups, roles: { auditor: { permissions: ['read'] } } })
  const alice = ['role:deployer@line-1', 'role:viewer']

  it('are the union of the grants whose scope holds the place', () => {
    expect(rights.at(alice, at('press-1'), 0).sort()).toEqual([
      'debug.write',
      'flows.write',
      'inject.write',
      'library.write',
      'read',
    ])
    expect(rights.at(alice, at('weld-1'), 0)).toEqual(['read'])
    expect(rights.at(alice, AT_FLOWADMIN, 0)).toEqual(['read'])
  })

  it('count a group grant only at instances of that group, never at flowadmin', () => {
    const contractor = ['role:viewer@line-2']
    expect(rights.at(contractor, at('weld-1'), 0)).toEqual(['read'])
    expect(rights.at(contractor, at('press-1'), 0)).toEqual([])
    expect(rights.at(contractor, AT_FLOWADMIN, 0)).toEqual([])
    expect(rights.at(contractor, { kind: 'fleet' }, 0)).toEqual([])
  })

  it('count a grant on flowadmin only there', () => {
    const ops = ['role:admin@flowadmin']
    expect(rights.at(ops, AT_FLOWADMIN, 0)).toEqual(['*'])
    expect(rights.at(ops, at('press-1'), 0)).toEqual([])
  })

  it("keep today's permissions meaning everywhere", () => {
    expect(rights.at(['*'], at('press-1'), 0)).toEqual(['*'])
    expect(rights.at(['read', 'nodes.write'], AT_FLOWADMIN, 0)).toEqual(['read', 'nodes.write'])
    expect(rights.at(['read', 'flows.write@line-1'], at('nr-7'), 0)).toEqual(['read', 'flows.write'])
    expect(rights.at(['read', 'flows.write@line-1'], at('weld-2'), 0)).toEqual(['read'])
  })

  it('give `*` alone when any grant there gives it', () => {
    expect(rights.at(['role:viewer', 'role:admin@line-1'], at('press-1'), 0)).toEqual(['*'])
  })

  it('give nothing for a role or group no longer there', () => {
    expect(rights.at(['role:gone@line-1', 'role:viewer@gone'], at('press-1'), 0)).toEqual([])
    expect(rights.at(['role:auditor'], at('press-1'), 0)).toEqual(['read'])
  })

  it('drop a role once the token is older than its lifetime, keeping the others', () => {
    const timed = createAccessRights({
      groups,
      roles: { 'break-glass': { permissions: '*', maxTokenLifetime: 3600 } },
    })
    const words = ['role:break-glass@line-1', 'role:viewer']
    expect(timed.at(words, at('press-1'), 3_599_999)).toEqual(['*'])
    expect(timed.at(words, at('press-1'), 3_600_000)).toEqual(['read'])
    expect(timed.at(['role:break-glass'], AT_FLOWADMIN, 3_600_000)).toEqual([])
  })

  it('follow a reload of roles and groups, and a change of assignments', () => {
    const live = createAccessRights({ groups })
    expect(live.at(['role:deployer@test'], at('press-1'), 0)).toEqual([])
    live.setAssignments([{ group: 'test', instance: 'press-1', by: 'ops', at: 1 }])
    expect(live.at(['role:deployer@test'], at('press-1'), 0)).toContain('flows.write')
    live.set({ groups: { test: [] }, roles: { deployer: { permissions: 'read' } } })
    expect(live.at(['role:deployer@test'], at('press-1'), 0)).toEqual(['read'])
    live.set({ groups: { other: [] } })
    expect(live.at(['role:deployer@test'], at('press-1'), 0)).toEqual([])
  })

  it('gives a token no rights at an instance where its person has no grant', () => {
    expect(rights.at(['role:deployer@line-1'], at('nr-9'), 0)).toEqual([])
  })

  it('say what words may ever give, whatever the scope', () => {
    expect(rights.anywhere(alice).sort()).toEqual([
      'debug.write',
      'flows.write',
      'inject.write',
      'library.write',
      'read',
    ])
    expect(rights.covers(alice, 'role:deployer@test')).toBe(true)
    expect(rights.covers(alice, 'nodes.write')).toBe(false)
    expect(rights.covers(alice, 'role:palette-admin')).toBe(false)
  })

  it("narrow a person's words to what they hold now", () => {
    expect(rights.narrow(['*'], ['read', 'role:deployer@line-1'])).toEqual(['read', 'role:deployer@line-1'])
    expect(rights.narrow(['read', 'role:deployer@line-1'], ['read', 'role:deployer@line-1'])).toEqual([
      'read',
      'role:deployer@line-1',
    ])
    expect(rights.narrow(['read'], ['read', 'role:deployer@line-1'])).toEqual(['read'])
    expect(rights.narrow(['role:viewer@line-1'], ['read', 'role:viewer@line-1'])).toEqual([
      'role:viewer@line-1',
    ])
  })
})
