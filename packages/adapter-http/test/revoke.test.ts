import { describe, expect, test } from 'vitest'
import { createWorld, expectChallenge, type World } from './helpers.js'

const revoke = (world: World, token: string, bearer?: string, as: 'form' | 'json' = 'form') =>
  world.request('/auth/revoke', {
    method: 'POST',
    headers: {
      'Content-Type': as === 'json' ? 'application/json' : 'application/x-www-form-urlencoded',
      ...(bearer === undefined ? {} : { Authorization: `Bearer ${bearer}` }),
    },
    body: as === 'json' ? JSON.stringify({ token }) : new URLSearchParams({ token }).toString(),
  })

const expectEmptyOk = async (res: Response) => {
  expect(res.status).toBe(200)
  expect(res.headers.get('Content-Type')).toBeNull()
  expect(res.headers.get('Content-Length')).toBe('0')
  expect(res.headers.get('Cache-Control')).toBe('no-store')
  expect(await res.text()).toBe('')
}

describe('POST /auth/revoke', () => {
  test('revoking its own token (form): 200 empty, then the token is refused', async () => {
    const world = await createWorld()
    const token = await world.login()
    await expectEmptyOk(await revoke(world, token, token))
    await expectChallenge(await world.get('/settings', token), 'invalid_token')
    await expectChallenge(await revoke(world, token, token), 'invalid_token')
    expect(world.events.ofType('token.revoked')).toEqual([
      expect.objectContaining({ owner: 'admin', username: 'admin', address: '203.0.113.7' }),
    ])
  })

  test('a JSON body works too; the caller revokes another token of its own user', async () => {
    const world = await createWorld()
    const caller = await world.login('reader', 'read')
    const other = await world.login('reader', 'read')
    await expectEmptyOk(await revoke(world, other, caller, 'json'))
    await expectChallenge(await world.get('/settings', other), 'invalid_token')
    expect((await world.get('/settings', caller)).status).toBe(200)
  })

  test("another user's token without `*`: 200, and nothing happens", async () => {
    const world = await createWorld()
    const admin = await world.login()
    const reader = await world.login('reader', 'read')
    await expectEmptyOk(await revoke(world, admin, reader))
    expect((await world.get('/settings', admin)).status).toBe(200)
    expect(world.events.ofType('token.revoked')).toEqual([])
  })

  test("another user's token with `*`: revoked", async () => {
    const world = await createWorld()
    const admin = await world.login()
    const reader = await world.login('reader', 'read')
    await expectEmptyOk(await revoke(world, reader, admin))
    await expectChallenge(await world.get('/settings', reader), 'invalid_token')
  })

  test('a resource server’s token ends itself: 200, then inactive to its server and refused here', async () => {
    const world = await createWorld()
    const token = await world.loginAsFleet()
    expect(await (await world.introspect(token)).json()).toMatchObject({ active: true })
    await expectEmptyOk(await revoke(world, token, token))
    expect(await (await world.introspect(token)).json()).toEqual({ active: false })
    await expectChallenge(await revoke(world, token, token), 'invalid_token')
    expect(world.events.ofType('token.revoked')).toEqual([
      expect.objectContaining({ owner: 'admin', username: 'admin', clientId: 'fleet' }),
    ])
  })

  test('a resource server’s token, even with `*`, ends nothing but itself', async () => {
    const world = await createWorld()
    const editor = await world.loginAsFleet('admin', '*')
    const console = await world.login('admin')
    const sibling = await world.loginAsFleet('admin', '*')
    const reader = await world.login('reader', 'read')
    for (const other of [console, sibling, reader]) await expectEmptyOk(await revoke(world, other, editor))
    expect((await world.get('/settings', console)).status).toBe(200)
    expect((await world.get('/settings', reader)).status).toBe(200)
    expect(await (await world.introspect(sibling)).json()).toMatchObject({ active: true })
    expect(world.events.ofType('token.revoked')).toEqual([])
    // flowadmin's own token of the same user ends the resource server's tokens, as before.
    await expectEmptyOk(await revoke(world, sibling, console))
    expect(await (await world.introspect(sibling)).json()).toEqual({ active: false })
  })

  test('an unknown token: 200 empty', async () => {
    const world = await createWorld()
    const token = await world.login()
    await expectEmptyOk(await revoke(world, 'no-such-token', token))
  })

  test('no bearer: 401 and the token stays valid; a garbage bearer: 401 invalid_token', async () => {
    const world = await createWorld()
    const token = await world.login()
    await expectChallenge(await revoke(world, token))
    await expectChallenge(await revoke(world, token, 'garbage'), 'invalid_token')
    expect((await world.get('/settings', token)).status).toBe(200)
  })

  test('an anonymous caller (default permissions) may call it, but cannot revoke a user token', async () => {
    const world = await createWorld({ defaultPermissions: 'read' })
    const token = await world.login()
    await expectEmptyOk(await revoke(world, token))
    expect((await world.get('/settings', token)).status).toBe(200)
  })

  for (const [name, contentType, body] of [
    ['missing token field (form)', 'application/x-www-form-urlencoded', 'other=1'],
    ['empty token field', 'application/x-www-form-urlencoded', 'token='],
    ['token given twice', 'application/x-www-form-urlencoded', 'token=a&token=b'],
    ['missing token field (JSON)', 'application/json', '{}'],
    ['token not a string', 'application/json', '{"token":42}'],
    ['malformed JSON', 'application/json', '{"token":'],
    ['JSON array', 'application/json', '["token"]'],
    ['wrong content type', 'text/plain', 'token=abc'],
  ] as const) {
    test(`${name}: 400 invalid_request`, async () => {
      const world = await createWorld()
      const token = await world.login()
      const res = await world.request('/auth/revoke', {
        method: 'POST',
        headers: { 'Content-Type': contentType, Authorization: `Bearer ${token}` },
        body,
      })
      expect(res.status).toBe(400)
      expect(res.headers.get('Cache-Control')).toBe('no-store')
      const answer = (await res.json()) as { error: string; error_description: string }
      expect(answer.error).toBe('invalid_request')
      expect(answer.error_description).toEqual(expect.any(String))
      expect((await world.get('/settings', token)).status).toBe(200)
    })
  }

  test('authentication comes before the body: no bearer and no body is 401', async () => {
    const world = await createWorld()
    const res = await world.request('/auth/revoke', { method: 'POST' })
    await expectChallenge(res)
  })
})
