import { describe, expect, test } from 'vitest'
import { createWorld, expectChallenge, sendJson, type World } from './helpers.js'

/** Begins an enrolment as the holder of `token`; the secret it answered. */
async function start(world: World, token: string): Promise<string> {
  const res = await sendJson(world, 'POST', '/auth/mfa/totp', token)
  expect(res.status).toBe(200)
  return ((await res.json()) as { secret: string }).secret
}

describe('second factor over HTTP', () => {
  test('a person begins TOTP, confirms it with one code and gets ten recovery codes once', async () => {
    const world = await createWorld()
    const token = await world.login('reader', 'read')
    const before = await sendJson(world, 'GET', '/auth/mfa', token)
    expect(before.status).toBe(200)
    expect(before.headers.get('Cache-Control')).toBe('no-store')
    expect(await before.json()).toEqual({
      totp: 'none',
      recovery_codes: 0,
      enrolled_at: null,
      enrolled_at_sign_in: false,
    })

    const started = await sendJson(world, 'POST', '/auth/mfa/totp', token)
    expect(started.status).toBe(200)
    expect(started.headers.get('Cache-Control')).toBe('no-store')
    const body = (await started.json()) as { secret: string; uri: string; qr: string }
    expect(body).toEqual({
      secret: expect.any(String),
      uri: expect.stringMatching(/^otpauth:\/\/totp\//),
      qr: `data:image/svg+xml;base64,${btoa('<svg/>')}`,
    })
    expect(await (await sendJson(world, 'GET', '/auth/mfa', token)).json()).toEqual({
      totp: 'pending',
      recovery_codes: 0,
      enrolled_at: null,
      enrolled_at_sign_in: false,
    })

    const wrong = await sendJson(world, 'POST', '/auth/mfa/totp/confirm', token, { code: '000000' })
    expect(wrong.status).toBe(400)
    expect(await wrong.json()).toEqual({
      code: 'invalid_code',
      message: 'The code is wrong, expired or used already',
    })

    const code = world.totp.codeAt(body.secret, world.clock.now())
    const confirmed = await sendJson(world, 'POST', '/auth/mfa/totp/confirm', token, { code })
    expect(confirmed.status).toBe(200)
    expect(confirmed.headers.get('Cache-Control')).toBe('no-store')
    const { recovery_codes } = (await confirmed.json()) as { recovery_codes: string[] }
    expect(recovery_codes).toHaveLength(10)
    expect(await (await sendJson(world, 'GET', '/auth/mfa', token)).json()).toEqual({
      totp: 'enrolled',
      recovery_codes: 10,
      enrolled_at: new Date(world.clock.now()).toISOString(),
      enrolled_at_sign_in: false,
    })
    expect(world.events.ofType('mfa.enrolled')).toMatchObject([
      { username: 'reader', address: '203.0.113.7', atSignIn: false },
    ])

    const again = await sendJson(world, 'POST', '/auth/mfa/totp', token)
    expect(again.status).toBe(409)
    expect(await again.json()).toMatchObject({ code: 'factor_exists' })
  })

  test('refuses a confirmation without an enrolment, without a code, or that is not JSON', async () => {
    const world = await createWorld()
    const token = await world.login('reader', 'read')
    const none = await sendJson(world, 'POST', '/auth/mfa/totp/confirm', token, { code: '123456' })
    expect(none.status).toBe(409)
    expect(await none.json()).toMatchObject({ code: 'enrolment_not_found' })
    await start(world, token)
    for (const body of [{}, { code: '' }, { code: 123456 }, 'not json', { code: '1', extra: true }]) {
      const res = await sendJson(world, 'POST', '/auth/mfa/totp/confirm', token, body)
      expect(res.status).toBe(400)
      expect(await res.json()).toMatchObject({ code: 'invalid_request' })
    }
  })

  test('throttles wrong codes like wrong passwords: 429 with Retry-After, the right code unchecked', async () => {
    const world = await createWorld()
    const token = await world.login('reader', 'read')
    const secret = await start(world, token)
    for (let i = 0; i < 5; i++) {
      expect(
        (await sendJson(world, 'POST', '/auth/mfa/totp/confirm', token, { code: '000000' })).status,
      ).toBe(400)
    }
    const code = world.totp.codeAt(secret, world.clock.now())
    const refused = await sendJson(world, 'POST', '/auth/mfa/totp/confirm', token, { code })
    expect(refused.status).toBe(429)
    expect(refused.headers.get('Retry-After')).toMatch(/^[1-9][0-9]*$/)
    expect(await (await sendJson(world, 'GET', '/auth/mfa', token)).json()).toMatchObject({
      totp: 'pending',
      recovery_codes: 0,
    })
    expect(world.events.ofType('mfa.failed')).toHaveLength(5)
    expect(world.events.ofType('mfa.throttled')).toHaveLength(1)
  })

  test('DELETE /auth/mfa?user= removes a person’s factors for a caller with * signed in with a second factor, and only then', async () => {
    const world = await createWorld()
    const reader = await world.login('reader', 'read')
    const secret = await start(world, reader)
    const code = world.totp.codeAt(secret, world.clock.now())
    expect((await sendJson(world, 'POST', '/auth/mfa/totp/confirm', reader, { code })).status).toBe(200)

    await expectChallenge(
      await sendJson(world, 'DELETE', '/auth/mfa?user=admin', await world.signedInWith('reader')),
      'insufficient_scope',
    )
    const admin = await world.signedInWith('admin')
    const empty = await sendJson(world, 'DELETE', '/auth/mfa?user=', admin)
    expect(empty.status).toBe(400)
    expect(await empty.json()).toMatchObject({ code: 'invalid_request' })
    const removed = await sendJson(world, 'DELETE', '/auth/mfa?user=reader', admin)
    expect(removed.status).toBe(204)
    expect(await removed.text()).toBe('')
    expect((await sendJson(world, 'DELETE', '/auth/mfa?user=reader', admin)).status).toBe(404)
    // The reader's session ended with the factor.
    await expectChallenge(await sendJson(world, 'GET', '/auth/mfa', reader), 'invalid_token')
    expect(world.events.ofType('mfa.removed')).toMatchObject([
      { username: 'admin', owner: 'reader', factors: 'all' },
    ])
  })

  test('removing a factor needs a recent sign-in with a second factor: an API token with *, a password alone or an older session are refused', async () => {
    const world = await createWorld()
    const reader = await world.login('reader', 'read')
    const secret = await start(world, reader)
    const code = world.totp.codeAt(secret, world.clock.now())
    expect((await sendJson(world, 'POST', '/auth/mfa/totp/confirm', reader, { code })).status).toBe(200)
    const password = await world.login('admin', '*')
    const created = await world.post('/auth/tokens', { name: 'automation', scope: '*' }, password)
    expect(created.status).toBe(201)
    const { token } = (await created.json()) as { token: string }
    for (const path of ['/auth/mfa?user=reader', '/auth/mfa'])
      await expectChallenge(await sendJson(world, 'DELETE', path, token), 'insufficient_scope')
    const older = await world.signedInWith('admin', 'passkey')
    world.clock.advance(10 * 60_000 + 1)
    for (const caller of [password, reader, older]) {
      const refused = await sendJson(world, 'DELETE', '/auth/mfa?user=reader', caller)
      expect(refused.status).toBe(403)
      expect(refused.headers.get('Cache-Control')).toBe('no-store')
      expect(await refused.json()).toEqual({
        code: 'reauthentication_required',
        message: expect.stringContaining('Sign in again with your second factor'),
      })
    }
    expect((await sendJson(world, 'DELETE', '/auth/mfa', reader)).status).toBe(403)
    expect(world.events.ofType('mfa.removed')).toEqual([])
    expect(await world.core.mfa.required('reader')).toBe(true)
  })

  test('DELETE /auth/mfa removes the caller’s own authenticator app, with a second-factor sign-in', async () => {
    const world = await createWorld()
    const first = await world.login('reader', 'read')
    const secret = await start(world, first)
    const code = world.totp.codeAt(secret, world.clock.now())
    expect((await sendJson(world, 'POST', '/auth/mfa/totp/confirm', first, { code })).status).toBe(200)
    const reader = await world.signedInWith('reader', 'password_recovery_code')
    const removed = await sendJson(world, 'DELETE', '/auth/mfa', reader)
    expect(removed.status).toBe(204)
    expect(await (await sendJson(world, 'GET', '/auth/mfa', reader)).json()).toMatchObject({ totp: 'none' })
    expect((await sendJson(world, 'DELETE', '/auth/mfa', reader)).status).toBe(404)
    expect(world.events.ofType('mfa.removed')).toMatchObject([
      { username: 'reader', owner: 'reader', factors: 'totp', sessionsEnded: 1 },
    ])
  })

  test('enrolment needs the person’s own session: an API token, even with *, is refused and ends nothing', async () => {
    const world = await createWorld()
    const session = await world.login()
    const created = await world.post('/auth/tokens', { name: 'ci', scope: '*' }, session)
    expect(created.status).toBe(201)
    const { token } = (await created.json()) as { token: string }
    await expectChallenge(await sendJson(world, 'POST', '/auth/mfa/totp', token), 'insufficient_scope')
    await expectChallenge(
      await sendJson(world, 'POST', '/auth/mfa/totp/confirm', token, { code: '123456' }),
      'insufficient_scope',
    )
    // Nothing began, and the owner's session still works.
    expect(await (await sendJson(world, 'GET', '/auth/mfa', session)).json()).toMatchObject({
      totp: 'none',
      recovery_codes: 0,
    })
    // Begun by the session, the enrolment cannot be confirmed with the API token either.
    const secret = await start(world, session)
    const code = world.totp.codeAt(secret, world.clock.now())
    await expectChallenge(
      await sendJson(world, 'POST', '/auth/mfa/totp/confirm', token, { code }),
      'insufficient_scope',
    )
    expect(world.events.ofType('mfa.enrolled')).toEqual([])
    expect((await sendJson(world, 'POST', '/auth/mfa/totp/confirm', session, { code })).status).toBe(200)
  })

  test('needs a person’s token', async () => {
    const world = await createWorld()
    await expectChallenge(await sendJson(world, 'GET', '/auth/mfa', null))
    await expectChallenge(await sendJson(world, 'POST', '/auth/mfa/totp', 'not-a-token'), 'invalid_token')
  })
})
