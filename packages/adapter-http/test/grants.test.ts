// GET /auth/grants: who holds which role where, for `*` on flowadmin alone.
import { describe, expect, it } from 'vitest'
import { createWorld, expectChallenge } from './helpers.js'
import { createResponseValidator } from './openapi-validate.js'

const world = () =>
  createWorld({
    access: { groups: { 'line-1': ['press-*'], test: [] } },
    users: [
      { username: 'alice', grants: [{ role: 'deployer', on: 'line-1' }] },
      { username: 'olga', grants: [{ role: 'admin', on: 'flowadmin' }] },
      { username: 'gina', grants: [{ role: 'admin', on: 'test' }] },
    ],
  })

const DEPLOYER = ['read', 'flows.write', 'inject.write', 'debug.write', 'library.write']
const settings = { owner: null, from: 'settings' }

describe('GET /auth/grants', () => {
  it("lists the settings' users and the API tokens that carry grants, as the OpenAPI document says", async () => {
    const w = await world()
    const alice = await w.login('alice', '')
    const made = await w.post('/auth/tokens', { name: 'ci', scope: 'role:deployer@line-1' }, alice)
    expect(made.status).toBe(201)
    // A token whose scope is a ceiling of plain permissions carries no grant.
    expect((await w.post('/auth/tokens', { name: 'plain', scope: 'read' }, alice)).status).toBe(201)
    const token = await w.login('olga', '')
    const res = await w.get('/auth/grants', token)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    expect(await res.json()).toEqual({
      grants: [
        { kind: 'user', holder: 'admin', role: null, permissions: ['*'], on: 'everywhere', ...settings },
        { kind: 'user', holder: 'reader', role: null, permissions: ['read'], on: 'everywhere', ...settings },
        {
          kind: 'user',
          holder: 'editor',
          role: null,
          permissions: ['nodes.read', 'nodes.write'],
          on: 'everywhere',
          ...settings,
        },
        { kind: 'user', holder: 'alice', role: 'deployer', permissions: DEPLOYER, on: 'line-1', ...settings },
        { kind: 'user', holder: 'olga', role: 'admin', permissions: ['*'], on: 'flowadmin', ...settings },
        { kind: 'user', holder: 'gina', role: 'admin', permissions: ['*'], on: 'test', ...settings },
        {
          kind: 'api-token',
          holder: 'ci',
          owner: 'alice',
          role: 'deployer',
          permissions: DEPLOYER,
          on: 'line-1',
          from: 'token',
        },
      ],
    })
    const validator = createResponseValidator(await (await w.request('/openapi.json')).json())
    const checked = await validator.check(
      'GET',
      'http://localhost/auth/grants',
      await w.get('/auth/grants', token),
    )
    expect(checked.problems).toEqual([])
  })

  it('refuses whoever lacks `*` on flowadmin, even with `*` on a group, and a call without a token', async () => {
    const w = await world()
    await expectChallenge(await w.get('/auth/grants', await w.login('reader', '')), 'insufficient_scope')
    await expectChallenge(await w.get('/auth/grants', await w.login('gina', '')), 'insufficient_scope')
    // The admin's token narrowed to reading reads no one's grants.
    await expectChallenge(await w.get('/auth/grants', await w.login('admin', 'read')), 'insufficient_scope')
    await expectChallenge(await w.get('/auth/grants'))
  })

  it('is not there without auth', async () => {
    const w = await createWorld({ auth: false })
    expect((await w.get('/auth/grants')).status).toBe(404)
  })
})
