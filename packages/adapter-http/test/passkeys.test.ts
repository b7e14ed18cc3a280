import { describe, expect, test } from 'vitest'
import { createWorld, expectChallenge, type World } from './helpers.js'

/** Options for a new passkey, asked by the holder of `token`. */
async function options(world: World, token: string): Promise<unknown> {
  const res = await world.post('/auth/passkeys/options', '', token)
  expect(res.status).toBe(200)
  expect(res.headers.get('Cache-Control')).toBe('no-store')
  return ((await res.json()) as { options: unknown }).options
}

/** Registers passkey `id` named `name` for the holder of `token`; the answer. */
async function register(world: World, token: string, id: string, name = `Key ${id}`) {
  return world.post(
    '/auth/passkeys',
    { name, response: world.webauthn.create(await options(world, token), id) },
    token,
  )
}

describe('passkeys over HTTP', () => {
  test('a person registers passkeys, lists them and removes one', async () => {
    const world = await createWorld()
    const token = await world.login('reader', 'read')
    const other = await world.login('reader', 'read')
    const empty = await world.get('/auth/passkeys', token)
    expect(empty.status).toBe(200)
    expect(empty.headers.get('Cache-Control')).toBe('no-store')
    expect(await empty.json()).toEqual({ passkeys: [] })

    const made = await options(world, token)
    expect(made).toMatchObject({ challenge: expect.any(String), user: 'reader', exclude: [] })
    const created = await world.post(
      '/auth/passkeys',
      { name: 'Laptop ✓', response: world.webauthn.create(made, 'cred-1') },
      token,
    )
    expect(created.status).toBe(201)
    expect(created.headers.get('Cache-Control')).toBe('no-store')
    const passkey = {
      id: 'cred-1',
      name: 'Laptop ✓',
      created_at: new Date(world.clock.now()).toISOString(),
      last_used_at: null,
      backed_up: false,
    }
    expect(await created.json()).toEqual({ passkey })
    // Registering ended the person's other session, not this one.
    expect((await world.get('/auth/passkeys', other)).status).toBe(401)
    expect(world.events.ofType('passkey.registered')).toMatchObject([
      { username: 'reader', id: 'cred-1', sessionsEnded: 1, address: '203.0.113.7' },
    ])
    // The next options exclude it.
    expect(await options(world, token)).toMatchObject({ exclude: ['cred-1'] })
    expect((await register(world, token, 'cred-2')).status).toBe(201)
    const listed = (await (await world.get('/auth/passkeys', token)).json()) as {
      passkeys: Array<{ id: string }>
    }
    expect(listed.passkeys.map((one) => one.id)).toEqual(['cred-1', 'cred-2'])

    // Removing one needs a sign-in with a second factor: the reader signs in with a passkey.
    const withPasskey = await world.signedInWith('reader', 'passkey')
    const removed = await world.delete('/auth/passkeys/cred-1', withPasskey)
    expect(removed.status).toBe(204)
    expect(await removed.text()).toBe('')
    const again = await world.delete('/auth/passkeys/cred-1', withPasskey)
    expect(again.status).toBe(404)
    expect(await again.json()).toEqual({
      code: 'passkey_not_found',
      message: 'You have no passkey with that id',
    })
    expect(world.events.ofType('passkey.removed')).toMatchObject([{ owner: 'reader', id: 'cred-1' }])
    // Another person cannot remove it.
    const admin = await world.signedInWith('admin', 'password_totp')
    expect((await world.delete('/auth/passkeys/cred-2', admin)).status).toBe(404)
    expect((await (await world.get('/auth/passkeys', withPasskey)).json()) as unknown).toMatchObject({
      passkeys: [{ id: 'cred-2' }],
    })
  })

  test('refuses bad bodies and refused answers with {code, message}; a challenge registers once', async () => {
    const world = await createWorld()
    const token = await world.login('reader', 'read')
    const made = await options(world, token)
    const good = world.webauthn.create(made, 'cred-1')
    const cases: Array<[unknown, string]> = [
      [{ response: good }, 'invalid_request'],
      [{ name: '', response: good }, 'invalid_request'],
      [{ name: '   ', response: good }, 'invalid_request'],
      [{ name: 'x'.repeat(65), response: good }, 'invalid_request'],
      [{ name: 'k' }, 'invalid_request'],
      [{ name: 'k', response: { id: 'x' } }, 'invalid_request'],
      [{ name: 'k', response: good, extra: 1 }, 'invalid_request'],
      ['not json', 'invalid_request'],
    ]
    for (const [body, code] of cases) {
      const res = await world.post('/auth/passkeys', body, token)
      expect(res.status).toBe(400)
      expect(await res.json()).toEqual({ code, message: expect.any(String) })
    }
    // An answer that does not verify is refused.
    const bad = await world.post(
      '/auth/passkeys',
      { name: 'k', response: world.webauthn.create(made, 'cred-1', { valid: false }) },
      token,
    )
    expect(bad.status).toBe(400)
    expect(await bad.json()).toEqual({ code: 'passkey_refused', message: expect.any(String) })
    expect(await (await world.get('/auth/passkeys', token)).json()).toEqual({ passkeys: [] })
    // A refusal spends nothing: the good answer registers, once.
    expect((await world.post('/auth/passkeys', { name: 'k', response: good }, token)).status).toBe(201)
    const late = await world.post('/auth/passkeys', { name: 'k', response: good }, token)
    expect(late.status).toBe(400)
    expect(await late.json()).toMatchObject({ code: 'passkey_refused' })
  })

  test('removing a passkey needs a recent sign-in with a second factor: a password alone or an older session get 403', async () => {
    const world = await createWorld()
    const password = await world.login('reader', 'read')
    expect((await register(world, password, 'cred-1')).status).toBe(201)
    const older = await world.signedInWith('reader', 'passkey')
    world.clock.advance(10 * 60_000 + 1)
    for (const caller of [password, older]) {
      const refused = await world.delete('/auth/passkeys/cred-1', caller)
      expect(refused.status).toBe(403)
      expect(refused.headers.get('Cache-Control')).toBe('no-store')
      expect(await refused.json()).toEqual({
        code: 'reauthentication_required',
        message:
          'Sign in again with your second factor (a code of your authenticator app, a recovery code or a passkey) to remove one: your session began more than 10 minutes ago, or its sign-in used no second factor',
      })
    }
    expect(world.events.ofType('passkey.removed')).toEqual([])
    expect(await world.core.passkeys.has('reader')).toBe(true)
  })

  test('refuses an eleventh passkey with 409', async () => {
    const world = await createWorld()
    const token = await world.login('reader', 'read')
    for (let i = 0; i < 10; i++) expect((await register(world, token, `cred-${i}`)).status).toBe(201)
    const res = await world.post('/auth/passkeys/options', '', token)
    expect(res.status).toBe(409)
    expect(await res.json()).toEqual({
      code: 'too_many_passkeys',
      message: 'A person may have at most 10 passkeys; remove one first',
    })
  })

  test('is the person’s own session’s: anonymous callers, API tokens and other audiences are refused', async () => {
    const world = await createWorld({ resourceServers: [] })
    const token = await world.login('admin', '*')
    const created = await world.post('/auth/tokens', { name: 'ci', scope: '*' }, token)
    expect(created.status).toBe(201)
    const api = ((await created.json()) as { token: string }).token
    const fleet = await world.loginAsFleet('admin', '*')
    await expectChallenge(await world.get('/auth/passkeys'))
    await expectChallenge(await world.post('/auth/passkeys/options', ''))
    for (const other of [api]) {
      await expectChallenge(await world.get('/auth/passkeys', other), 'insufficient_scope')
      await expectChallenge(await world.post('/auth/passkeys/options', '', other), 'insufficient_scope')
      const answer = world.webauthn.create({ challenge: 'c' }, 'cred-1')
      await expectChallenge(
        await world.post('/auth/passkeys', { name: 'k', response: answer }, other),
        'insufficient_scope',
      )
      await expectChallenge(await world.delete('/auth/passkeys/x', other), 'insufficient_scope')
    }
    // A token for another audience is no token here.
    await expectChallenge(await world.get('/auth/passkeys', fleet), 'invalid_token')
  })

  test('removing a person’s second factors (DELETE /auth/mfa) removes their passkeys', async () => {
    const world = await createWorld()
    const token = await world.login('reader', 'read')
    expect((await register(world, token, 'cred-1')).status).toBe(201)
    const admin = await world.signedInWith('admin', 'passkey')
    expect((await world.delete('/auth/mfa?user=reader', admin)).status).toBe(204)
    expect(await world.core.passkeys.has('reader')).toBe(false)
    expect((await world.delete('/auth/mfa?user=reader', admin)).status).toBe(404)
  })
})

describe('passkeys over HTTP, not configured', () => {
  test('every route answers 409 passkeys_not_configured', async () => {
    const world = await createWorld({ passkeys: false })
    const token = await world.login('reader', 'read')
    const answers = [
      await world.get('/auth/passkeys', token),
      await world.post('/auth/passkeys/options', '', token),
      await world.post(
        '/auth/passkeys',
        { name: 'k', response: world.webauthn.create({ challenge: 'c' }, 'c1') },
        token,
      ),
      await world.delete('/auth/passkeys/c1', token),
    ]
    for (const res of answers) {
      expect(res.status).toBe(409)
      expect(res.headers.get('Cache-Control')).toBe('no-store')
      expect(await res.json()).toEqual({
        code: 'passkeys_not_configured',
        message: 'Passkeys are not configured here (adminAuth.webauthn)',
      })
    }
  })
})
