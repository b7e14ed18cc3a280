// Rights where a request is made, through the core: a person's grants, the instance that asks
// (known from its own credential), flowadmin's own API, reloads, role lifetimes and API tokens.
import { permissionsOfGroups } from '@flowadmin/core'
import { WORLD_ADDRESS as ADDRESS } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'
import { deployer, world } from './access-world.js'

describe('rights at the asking instance', () => {
  it('are the union of the grants whose scope holds it', async () => {
    const { enrol, editorLogin, rightsAt } = world()
    const [press, weld, other] = [await enrol('press-1'), await enrol('weld-1'), await enrol('nr-9')]
    const alice = await editorLogin('alice')
    expect(await rightsAt(press, alice)).toEqual(deployer)
    expect(await rightsAt(weld, alice)).toEqual(['read'])
    expect(await rightsAt(other, alice)).toEqual(['read'])
  })

  it('are none, so the token is not active, where the person holds no grant', async () => {
    const { enrol, editorLogin, rightsAt } = world()
    const carl = await editorLogin('carl')
    expect(await rightsAt(await enrol('weld-2'), carl)).toEqual(['read'])
    expect(await rightsAt(await enrol('press-2'), carl)).toBe('inactive')
  })

  it('count only grants everywhere when the resource server asks with its shared secret', async () => {
    const { editorLogin, rightsAt, shared } = world()
    expect(await rightsAt(shared, await editorLogin('alice'))).toEqual(['read'])
    expect(await rightsAt(shared, await editorLogin('carl'))).toBe('inactive')
    expect(await rightsAt(shared, await editorLogin('admin'))).toEqual(['*'])
  })

  it('follow a grant removed from the settings at the next question', async () => {
    const { core, enrol, editorLogin, rightsAt, hasher } = world()
    const press = await enrol('press-1')
    const alice = await editorLogin('alice')
    expect(await rightsAt(press, alice)).toEqual(deployer)
    await core.setUsers([
      { username: 'admin', password: hasher.hash('pw'), permissions: '*' },
      { username: 'alice', password: hasher.hash('pw'), grants: [{ role: 'viewer', on: 'everywhere' }] },
    ])
    expect(await rightsAt(press, alice)).toEqual(['read'])
  })

  it('follow an instance put in a group, and taken out of it', async () => {
    const { core, enrol, editorLogin, rightsAt } = world()
    const other = await enrol('nr-9')
    const alice = await editorLogin('alice')
    core.rights.setAssignments([{ group: 'line-1', instance: 'nr-9', by: 'admin', at: 0 }])
    expect(await rightsAt(other, alice)).toEqual(deployer)
    core.rights.setAssignments([])
    expect(await rightsAt(other, alice)).toEqual(['read'])
  })

  it("drop a role's rights once the token is older than the role's lifetime", async () => {
    const { clock, enrol, editorLogin, rightsAt } = world()
    const press = await enrol('press-1')
    const bea = await editorLogin('bea')
    expect(await rightsAt(press, bea)).toEqual(['*'])
    clock.advance(60_000)
    expect(await rightsAt(press, bea)).toEqual(['read'])
  })

  it('give an API token on a group nothing at other instances', async () => {
    const { core, enrol, login, principalOf, rightsAt } = world()
    const admin = await principalOf(await login('admin'))
    const ci = await core.tokens.create(
      admin,
      { name: 'ci', scope: 'role:deployer@line-1', audience: 'fleet' },
      ADDRESS,
    )
    if (!ci.ok) throw new Error(ci.error.code)
    expect(ci.value.view.scope).toEqual(['role:deployer@line-1'])
    expect(await rightsAt(await enrol('press-1'), ci.value.token)).toEqual(deployer)
    expect(await rightsAt(await enrol('weld-1'), ci.value.token)).toBe('inactive')
  })

  it("refuse an API token beyond its owner's rights, and one of a role that does not exist", async () => {
    const { core, login, principalOf } = world()
    const alice = await principalOf(await login('alice'))
    const palette = await core.tokens.create(
      alice,
      { name: 'p', scope: 'role:palette-admin@line-1' },
      ADDRESS,
    )
    expect(palette).toMatchObject({ ok: false, error: { code: 'invalid_scope' } })
    const unknown = await core.tokens.create(alice, { name: 'u', scope: 'role:nobody' }, ADDRESS)
    expect(unknown).toMatchObject({ ok: false, error: { code: 'invalid_scope' } })
    const deploy = await core.tokens.create(alice, { name: 'd', scope: 'role:deployer@line-1' }, ADDRESS)
    expect(deploy.ok).toBe(true)
  })
})

describe("rights at flowadmin's own API", () => {
  it('are the grants on everywhere and on flowadmin', async () => {
    const { core, login, principalOf } = world()
    expect((await principalOf(await login('olga'))).permissions).toEqual(['*'])
    expect((await principalOf(await login('alice'))).permissions).toEqual(['read'])
    const carl = await login('carl')
    expect((await principalOf(carl)).permissions).toEqual([])
    expect(await core.authorize(carl, 'read', ADDRESS)).toMatchObject({
      ok: false,
      error: { code: 'forbidden' },
    })
  })

  it('let a person whose grants are all on groups sign in, their rights waiting where they hold', async () => {
    const { login } = world()
    await expect(login('carl', 'read')).resolves.toMatch(/./)
    await expect(login('carl', '*')).rejects.toThrow('invalid_credentials')
  })
})

describe("an identity provider's groups", () => {
  it('map to permissions everywhere and to grants', () => {
    const map = { ops: '*', line1: [{ role: 'deployer', on: 'line-1' }, 'read'], viewers: ['read'] }
    expect(permissionsOfGroups(['line1', 'viewers'], map)).toEqual(['role:deployer@line-1', 'read'])
    expect(permissionsOfGroups(['line1', 'ops'], map)).toEqual(['*'])
    expect(permissionsOfGroups('nobody', map)).toEqual([])
  })
})
