// GET /auth/access: a person's own grants, the roles they name, and what the token in use may do
// on each scope.
import { describe, expect, it } from 'vitest'
import { createWorld, expectChallenge } from './helpers.js'
import { createResponseValidator } from './openapi-validate.js'

const world = () =>
  createWorld({
    access: {
      groups: { 'line-1': ['press-*'], 'line-2': ['weld-*'] },
      roles: { 'break-glass': { permissions: '*', maxTokenLifetime: 900 } },
    },
    users: [
      {
        username: 'alice',
        permissions: 'nodes.read',
        grants: [
          { role: 'deployer', on: 'line-1' },
          { role: 'break-glass', on: 'line-2' },
        ],
      },
    ],
  })

const DEPLOYER = ['read', 'flows.write', 'inject.write', 'debug.write', 'library.write']

describe('GET /auth/access', () => {
  it("shows the caller's grants, their roles and what the token may do on each scope", async () => {
    const w = await world()
    const validator = createResponseValidator(await (await w.request('/openapi.json')).json())
    const token = await w.login('alice', '')
    const checked = await validator.check(
      'GET',
      'http://localhost/auth/access',
      await w.get('/auth/access', token),
    )
    expect(checked.problems).toEqual([])
    const res = await w.get('/auth/access', token)
    expect(res.status).toBe(200)
    expect(res.headers.get('cache-control')).toBe('no-store')
    const body = await res.json()
    expect(body).toEqual({
      username: 'alice',
      grants: [
        { permissions: ['nodes.read'], on: 'everywhere' },
        { role: 'deployer', on: 'line-1' },
        { role: 'break-glass', on: 'line-2' },
      ],
      roles: {
        deployer: { permissions: DEPLOYER, maxTokenLifetime: null },
        'break-glass': { permissions: ['*'], maxTokenLifetime: 900 },
      },
      scopes: {
        everywhere: ['nodes.read'],
        flowadmin: ['nodes.read'],
        'line-1': ['nodes.read', ...DEPLOYER],
        'line-2': ['*'],
      },
    })
    // A role's lifetime over, its rights are gone from the token.
    w.clock.advance(900_000)
    const later = (await (await w.get('/auth/access', token)).json()) as { scopes: Record<string, string[]> }
    expect(later.scopes['line-2']).toEqual(['nodes.read'])
  })

  it('shows what a narrower token may do, not all the person may', async () => {
    const w = await world()
    const token = await w.login('alice', 'read')
    const body = (await (await w.get('/auth/access', token)).json()) as { scopes: Record<string, string[]> }
    expect(body.scopes).toEqual({
      everywhere: ['nodes.read'],
      flowadmin: ['nodes.read'],
      'line-1': ['nodes.read', 'read'],
      'line-2': ['read'],
    })
  })

  it('answers 401 without a token', async () => {
    const w = await world()
    await expectChallenge(await w.get('/auth/access'))
  })
})
