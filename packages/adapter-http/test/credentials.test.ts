import { holdVerifications } from '@flowadmin/testkit'
import { describe, expect, test } from 'vitest'
import { createWorld, expectNoStore, grant, snapshot } from './helpers.js'

describe('POST /auth/token: credential failures are one indistinguishable 401', () => {
  test('unknown user, wrong password, unknown or missing client_id, too-wide scope: byte-identical', async () => {
    const world = await createWorld()
    const failures = [
      grant({ username: 'ghost' }),
      grant({ password: 'wrong' }),
      grant({ username: 'Admin' }),
      grant({ client_id: 'node-red-admin' }),
      grant({ client_id: undefined }),
      grant({ username: 'reader', scope: '*' }),
    ].map((fields) => Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)))

    const seen = []
    for (const [i, fields] of failures.entries()) {
      for (const as of ['form', 'json'] as const) {
        // One address per attempt, so the throttle stays out of the comparison.
        world.setAddress(`192.0.2.${i}${as === 'form' ? 0 : 1}`)
        seen.push(await snapshot(await world.tokenRequest(fields, as)))
      }
    }
    expect(seen[0]).toEqual({
      status: 401,
      headers: [
        ['cache-control', 'no-store'],
        ['content-length', '0'],
        ['pragma', 'no-cache'],
        ['x-content-type-options', 'nosniff'],
      ],
      body: '',
    })
    for (const other of seen) expect(other).toEqual(seen[0])
  })

  test('an unknown user costs one verification, against the dummy hash', async () => {
    const world = await createWorld()
    await world.tokenRequest(grant({ username: 'ghost' }))
    expect(world.hasher.verified).toEqual([world.hasher.dummyHash])
  })

  test('the failure is recorded without the password', async () => {
    const world = await createWorld()
    await world.tokenRequest(grant({ password: 'secret-guess' }))
    expect(world.events.ofType('login.failed')).toEqual([
      expect.objectContaining({ username: 'admin', address: '203.0.113.7' }),
    ])
    expect(JSON.stringify(world.events.events)).not.toContain('secret-guess')
  })
})

describe('POST /auth/token: throttling', () => {
  const fail = (world: Awaited<ReturnType<typeof createWorld>>) =>
    world.tokenRequest(grant({ password: 'wrong' }))

  test('after 5 failures of one user from one address: 429 with Retry-After, password not checked', async () => {
    const world = await createWorld()
    for (let i = 0; i < 5; i++) expect((await fail(world)).status).toBe(401)
    const verifiedBefore = world.hasher.verified.length

    const res = await world.tokenRequest(grant()) // the right password
    expect(res.status).toBe(429)
    expect(res.headers.get('Retry-After')).toBe('900')
    expectNoStore(res)
    const body = (await res.json()) as { error: string; error_description: string }
    expect(body.error).toBe('temporarily_unavailable')
    expect(body.error_description).toMatch(/900 seconds/)
    expect(world.hasher.verified.length).toBe(verifiedBefore)
    expect(world.events.ofType('login.throttled')).toHaveLength(1)
  })

  test('Retry-After counts down and the window ends', async () => {
    const world = await createWorld()
    for (let i = 0; i < 5; i++) await fail(world)
    world.clock.advance(100_000)
    expect((await world.tokenRequest(grant())).headers.get('Retry-After')).toBe('800')
    world.clock.advance(800_000)
    expect((await world.tokenRequest(grant())).status).toBe(200)
  })

  test('the real user still logs in from another address; other users are not locked', async () => {
    const world = await createWorld()
    for (let i = 0; i < 5; i++) await fail(world)
    expect((await world.tokenRequest(grant({ username: 'reader', scope: 'read' }))).status).toBe(200)
    world.setAddress('198.51.100.1')
    expect((await world.tokenRequest(grant())).status).toBe(200)
  })

  test('malformed requests are answered as such while throttled', async () => {
    const world = await createWorld()
    for (let i = 0; i < 5; i++) await fail(world)
    expect((await world.tokenRequest(grant({ grant_type: 'refresh_token' }))).status).toBe(400)
  })

  test('spraying usernames from one address throttles the address', async () => {
    const world = await createWorld()
    for (let i = 0; i < 20; i++) {
      expect((await world.tokenRequest(grant({ username: `user${i}` }))).status).toBe(401)
    }
    expect((await world.tokenRequest(grant({ username: 'someone-else' }))).status).toBe(429)
  })

  test('the counters live in the store: a restarted app over the same store still refuses', async () => {
    const first = await createWorld()
    for (let i = 0; i < 5; i++) await fail(first)
    const second = await createWorld({ stores: first.stores })
    expect((await second.tokenRequest(grant())).status).toBe(429)
    expect(second.hasher.verified).toEqual([])
  })
})

describe('POST /auth/token: beyond the verifier queue', () => {
  test('503 temporarily_unavailable with Retry-After, at once, the password not checked', async () => {
    const world = await createWorld({ loginQueue: { concurrency: 1, maxWaiting: 0, retryAfter: 2 } })
    const hold = holdVerifications(world.hasher)
    const first = world.tokenRequest(grant())
    await hold.started // the one slot is taken
    world.setAddress('198.51.100.1')
    const res = await world.tokenRequest(grant())
    expect(res.status).toBe(503)
    expect(res.headers.get('Retry-After')).toBe('2')
    expectNoStore(res)
    expect(await res.json()).toEqual({
      error: 'temporarily_unavailable',
      error_description: 'Too many logins are being checked. Try again shortly.',
    })
    expect(world.events.ofType('login.shed')).toEqual([
      expect.objectContaining({ username: 'admin', address: '198.51.100.1', retryAfter: 2 }),
    ])
    hold.restore()
    expect((await first).status).toBe(200)
    expect(world.hasher.verified).toHaveLength(1)
    expect((await world.tokenRequest(grant())).status).toBe(200)
  })
})
