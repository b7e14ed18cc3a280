import { createMemoryStores } from '@flowadmin/adapter-memory'
import { webDigest } from '@flowadmin/core'
import {
  createEventRecorder,
  createFixedClock,
  createPlainHasher,
  createSeededRandom,
} from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'
import { createLoginQueue } from '../src/auth/login-queue.js'
import {
  createMachineSecret,
  equalInConstantTime,
  isSecretDigest,
  secretDigest,
} from '../src/auth/machine-secret.js'
import { createResourceServers } from '../src/auth/resource-servers.js'
import { createThrottle, DEFAULT_THROTTLE } from '../src/auth/throttle.js'

function setup(secret?: string) {
  const clock = createFixedClock()
  const hasher = createPlainHasher()
  const events = createEventRecorder()
  const throttle = createThrottle(createMemoryStores().throttle, clock, webDigest, DEFAULT_THROTTLE)
  const queue = createLoginQueue({ concurrency: 1, maxWaiting: 8, maxWaitingKnown: 8, retryAfter: 1 })
  const servers = createResourceServers(
    { verifier: hasher, queue, throttle, digest: webDigest, events, clock },
    [{ id: 'fleet', secret: secret ?? hasher.hash('s3cret') }],
  )
  return { clock, hasher, events, servers, throttle }
}

describe('resource servers', () => {
  it('verify a secret once; later calls with it cost no verification and are remembered as the last call', async () => {
    const { clock, hasher, events, servers } = setup()
    expect(servers.activity()).toEqual([{ id: 'fleet', lastCallAt: null, secret: 'password_hash' }])
    expect(await servers.authenticate('fleet', 's3cret', '10.0.0.1')).toEqual({
      ok: true,
      value: { id: 'fleet' },
    })
    clock.advance(5_000)
    expect(await servers.authenticate('fleet', 's3cret', '10.0.0.2')).toEqual({
      ok: true,
      value: { id: 'fleet' },
    })
    expect(hasher.verified).toHaveLength(1)
    expect(events.ofType('client.authenticated')).toHaveLength(1)
    expect(servers.activity()).toEqual([{ id: 'fleet', lastCallAt: clock.now(), secret: 'password_hash' }])
  })

  it('refuse a wrong secret or an unknown id alike, each at the cost of one verification, and audit it', async () => {
    const { hasher, events, servers } = setup()
    await servers.authenticate('fleet', 's3cret', '10.0.0.1')
    // A wrong secret after the right one was verified is checked in full, not waved through.
    expect(await servers.authenticate('fleet', 'guess', '10.0.0.1')).toEqual({
      ok: false,
      error: { code: 'invalid_client' },
    })
    expect(await servers.authenticate('nobody', 's3cret', '10.0.0.1')).toEqual({
      ok: false,
      error: { code: 'invalid_client' },
    })
    expect(hasher.verified).toEqual([hasher.hash('s3cret'), hasher.hash('s3cret'), hasher.dummyHash])
    expect(events.ofType('client.failed').map(({ clientId, address }) => ({ clientId, address }))).toEqual([
      { clientId: 'fleet', address: '10.0.0.1' },
      { clientId: 'nobody', address: '10.0.0.1' },
    ])
  })

  it('throttle a hashed secret not verified yet like a password: once throttled, nothing is verified, the right one refused too', async () => {
    const { hasher, events, servers } = setup()
    for (let i = 0; i < DEFAULT_THROTTLE.maxFailuresPerUser; i++) {
      expect(await servers.authenticate('fleet', `guess ${i}`, '10.0.0.9')).toEqual({
        ok: false,
        error: { code: 'invalid_client' },
      })
    }
    expect(hasher.verified).toHaveLength(DEFAULT_THROTTLE.maxFailuresPerUser)
    // Every guess from now on, new or repeated, the right one among them, is refused unverified.
    for (const guess of [
      'guess 5',
      'guess 0',
      's3cret',
      ...Array.from({ length: 40 }, (_, i) => `more ${i}`),
    ]) {
      expect(await servers.authenticate('fleet', guess, '10.0.0.9')).toMatchObject({
        ok: false,
        error: { code: 'throttled', retryAfter: expect.any(Number) },
      })
    }
    expect(hasher.verified).toHaveLength(DEFAULT_THROTTLE.maxFailuresPerUser)
    expect(events.ofType('client.throttled')).toHaveLength(43)
    expect(events.ofType('client.authenticated')).toEqual([])
    // From another address it is verified once; then it is known, from the throttled address too.
    expect(await servers.authenticate('fleet', 's3cret', '10.0.0.1')).toEqual({
      ok: true,
      value: { id: 'fleet' },
    })
    expect(await servers.authenticate('fleet', 's3cret', '10.0.0.9')).toEqual({
      ok: true,
      value: { id: 'fleet' },
    })
    expect(hasher.verified).toHaveLength(DEFAULT_THROTTLE.maxFailuresPerUser + 1)
  })

  it('never throttle a hashed secret verified since the start: wrong ones from its address after it do not lock it out', async () => {
    const { hasher, events, servers } = setup()
    expect(await servers.authenticate('fleet', 's3cret', '10.0.0.9')).toEqual({
      ok: true,
      value: { id: 'fleet' },
    })
    for (let i = 0; i < DEFAULT_THROTTLE.maxFailuresPerUser; i++) {
      await servers.authenticate('fleet', `guess ${i}`, '10.0.0.9')
    }
    const verifications = hasher.verified.length
    expect(await servers.authenticate('fleet', 'guess 9', '10.0.0.9')).toMatchObject({
      ok: false,
      error: { code: 'throttled', retryAfter: expect.any(Number) },
    })
    expect(await servers.authenticate('fleet', 's3cret', '10.0.0.9')).toEqual({
      ok: true,
      value: { id: 'fleet' },
    })
    expect(hasher.verified).toHaveLength(verifications)
    expect(events.ofType('client.throttled')).toHaveLength(1)
    expect(events.ofType('client.authenticated')).toHaveLength(1)
  })

  it('throttle a hashed secret again after a reload until it is verified again', async () => {
    const { hasher, servers } = setup()
    expect((await servers.authenticate('fleet', 's3cret', '10.0.0.9')).ok).toBe(true)
    for (let i = 0; i < DEFAULT_THROTTLE.maxFailuresPerUser; i++) {
      await servers.authenticate('fleet', `guess ${i}`, '10.0.0.9')
    }
    servers.set([{ id: 'fleet', secret: hasher.hash('s3cret') }])
    const verifications = hasher.verified.length
    expect(await servers.authenticate('fleet', 's3cret', '10.0.0.9')).toMatchObject({
      ok: false,
      error: { code: 'throttled' },
    })
    expect(hasher.verified).toHaveLength(verifications)
    // Its digest, as `flowadmin secret` prints it, is never throttled.
    servers.set([{ id: 'fleet', secret: await secretDigest(webDigest, 's3cret') }])
    expect(await servers.authenticate('fleet', 's3cret', '10.0.0.9')).toEqual({
      ok: true,
      value: { id: 'fleet' },
    })
    expect(hasher.verified).toHaveLength(verifications)
  })

  it('throttle an unknown id like a wrong secret, without a verification once throttled', async () => {
    const { hasher, servers } = setup()
    for (let i = 0; i < DEFAULT_THROTTLE.maxFailuresPerUser; i++) {
      await servers.authenticate('nobody', `guess ${i}`, '10.0.0.9')
    }
    const verifications = hasher.verified.length
    expect(await servers.authenticate('nobody', 'guess', '10.0.0.9')).toMatchObject({
      ok: false,
      error: { code: 'throttled' },
    })
    expect(hasher.verified).toHaveLength(verifications)
  })

  it('forget every verified secret and removed servers when set again (a reload)', async () => {
    const { hasher, servers } = setup()
    await servers.authenticate('fleet', 's3cret', '10.0.0.1')
    servers.set([{ id: 'fleet', secret: hasher.hash('rotated') }])
    expect((await servers.authenticate('fleet', 's3cret', '10.0.0.1')).ok).toBe(false)
    expect((await servers.authenticate('fleet', 'rotated', '10.0.0.1')).ok).toBe(true)
    servers.set([])
    expect(servers.activity()).toEqual([])
    expect((await servers.authenticate('fleet', 'rotated', '10.0.0.1')).ok).toBe(false)
  })

  it('are not locked out by the wrong passwords of the users who log in through them (the same address)', async () => {
    const { servers, throttle } = setup()
    // Twenty failed logins from the instance's address close that address for logins.
    for (let i = 0; i < DEFAULT_THROTTLE.maxFailuresPerAddress; i++) {
      const decision = await throttle.begin(`user${i}`, '10.0.0.7')
      if (decision.outcome !== 'proceed') throw new Error(decision.outcome)
      await throttle.finish(decision.attempt, 'failed')
    }
    expect((await throttle.begin('another', '10.0.0.7')).outcome).toBe('throttled')
    expect(await servers.authenticate('fleet', 's3cret', '10.0.0.7')).toEqual({
      ok: true,
      value: { id: 'fleet' },
    })
  })

  it('refuse a secret that a reload replaced while it was being checked', async () => {
    const { hasher, servers } = setup()
    const verify = hasher.verify
    let reload = () => {}
    hasher.verify = async (hash, password) => {
      reload()
      return verify(hash, password)
    }
    reload = () => servers.set([{ id: 'fleet', secret: hasher.hash('rotated') }])
    expect(await servers.authenticate('fleet', 's3cret', '10.0.0.1')).toEqual({
      ok: false,
      error: { code: 'invalid_client' },
    })
    reload = () => {}
    expect((await servers.authenticate('fleet', 'rotated', '10.0.0.1')).ok).toBe(true)
  })
})

describe('resource servers with a machine secret (its digest in the settings)', () => {
  const digestOf = (secret: string) => secretDigest(webDigest, secret)

  it('accept the right secret for one hash and no verification, audited once after a start', async () => {
    const { hasher, events, servers } = setup(await digestOf('machine-secret'))
    for (const address of ['10.0.0.1', '10.0.0.2', '10.0.0.1']) {
      expect(await servers.authenticate('fleet', 'machine-secret', address)).toEqual({
        ok: true,
        value: { id: 'fleet' },
      })
    }
    expect(hasher.verified).toEqual([])
    expect(events.ofType('client.authenticated')).toHaveLength(1)
    // Told apart from a password hash, for the console to mark the latter.
    expect(servers.activity()).toEqual([expect.objectContaining({ id: 'fleet', secret: 'digest' })])
  })

  it('refuse a wrong secret and an unknown id without a verification, audit them, throttle them, and never the right one', async () => {
    const { hasher, events, servers } = setup(await digestOf('machine-secret'))
    expect(await servers.authenticate('fleet', 'machine-secreT', '10.0.0.9')).toEqual({
      ok: false,
      error: { code: 'invalid_client' },
    })
    expect(await servers.authenticate('nobody', 'machine-secret', '10.0.0.9')).toEqual({
      ok: false,
      error: { code: 'invalid_client' },
    })
    expect(events.ofType('client.failed')).toHaveLength(2)
    for (let i = 1; i < DEFAULT_THROTTLE.maxFailuresPerUser; i++) {
      await servers.authenticate('fleet', `guess ${i}`, '10.0.0.9')
    }
    expect(await servers.authenticate('fleet', 'guess', '10.0.0.9')).toMatchObject({
      ok: false,
      error: { code: 'throttled' },
    })
    expect(events.ofType('client.throttled')).toHaveLength(1)
    expect(await servers.authenticate('fleet', 'machine-secret', '10.0.0.9')).toEqual({
      ok: true,
      value: { id: 'fleet' },
    })
    expect(hasher.verified).toEqual([])
  })

  it('let an unknown id cost a verification while another server still has a hashed secret', async () => {
    const { hasher, servers } = setup(await digestOf('machine-secret'))
    servers.set([
      { id: 'fleet', secret: await digestOf('machine-secret') },
      { id: 'legacy', secret: hasher.hash('old') },
    ])
    expect((await servers.authenticate('nobody', 'x', '10.0.0.1')).ok).toBe(false)
    expect(hasher.verified).toEqual([hasher.dummyHash])
  })

  it('swap secrets on a reload: the old one refused, the new one accepted, hashed or digest', async () => {
    const { hasher, servers } = setup()
    expect((await servers.authenticate('fleet', 's3cret', '10.0.0.1')).ok).toBe(true)
    servers.set([{ id: 'fleet', secret: await digestOf('machine-secret') }])
    expect((await servers.authenticate('fleet', 's3cret', '10.0.0.1')).ok).toBe(false)
    expect((await servers.authenticate('fleet', 'machine-secret', '10.0.0.1')).ok).toBe(true)
    servers.set([{ id: 'fleet', secret: await digestOf('rotated') }])
    expect((await servers.authenticate('fleet', 'machine-secret', '10.0.0.1')).ok).toBe(false)
    expect((await servers.authenticate('fleet', 'rotated', '10.0.0.1')).ok).toBe(true)
    servers.set([{ id: 'fleet', secret: hasher.hash('s3cret') }])
    expect((await servers.authenticate('fleet', 'rotated', '10.0.0.1')).ok).toBe(false)
    expect((await servers.authenticate('fleet', 's3cret', '10.0.0.1')).ok).toBe(true)
  })
})

describe('machine secrets', () => {
  it('are 43 base64url characters of 32 random bytes, with their digest as the settings hold it', async () => {
    const random = createSeededRandom(3)
    const one = await createMachineSecret(random, webDigest)
    const two = await createMachineSecret(random, webDigest)
    expect(one.secret).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(two.secret).not.toBe(one.secret)
    expect(one.digest).toBe(`sha256:${await webDigest.sha256(one.secret)}`)
    expect(isSecretDigest(one.digest)).toBe(true)
    for (const text of [
      'sha256:',
      `sha256:${'A'.repeat(64)}`,
      `sha256:${'0'.repeat(63)}`,
      `sha512:${'0'.repeat(64)}`,
      '$argon2id$v=19',
    ])
      expect(isSecretDigest(text)).toBe(false)
  })

  it('are compared whole: equal texts only, whatever the lengths', () => {
    expect(equalInConstantTime('abc', 'abc')).toBe(true)
    expect(equalInConstantTime('abc', 'abd')).toBe(false)
    expect(equalInConstantTime('abc', 'ab')).toBe(false)
    expect(equalInConstantTime('ab', 'abc')).toBe(false)
    expect(equalInConstantTime('', 'a')).toBe(false)
    expect(equalInConstantTime('', '')).toBe(true)
  })
})
