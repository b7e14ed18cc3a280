import { createMemoryStores } from '@flowadmin/adapter-memory'
import { webDigest } from '@flowadmin/core'
import { createEventRecorder, createFixedClock, createPlainHasher } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'
import { createLoginQueue } from '../src/auth/login-queue.js'
import { createResourceServers } from '../src/auth/resource-servers.js'
import { createThrottle, DEFAULT_THROTTLE } from '../src/auth/throttle.js'

function setup() {
  const clock = createFixedClock()
  const hasher = createPlainHasher()
  const events = createEventRecorder()
  const throttle = createThrottle(createMemoryStores().throttle, clock, webDigest, DEFAULT_THROTTLE)
  const queue = createLoginQueue({ concurrency: 1, maxWaiting: 8, maxWaitingKnown: 8, retryAfter: 1 })
  const servers = createResourceServers(
    { verifier: hasher, queue, throttle, digest: webDigest, events, clock },
    [{ id: 'fleet', secret: hasher.hash('s3cret') }],
  )
  return { clock, hasher, events, servers, throttle }
}

describe('resource servers', () => {
  it('verify a secret once; later calls with it cost no verification and are remembered as the last call', async () => {
    const { clock, hasher, events, servers } = setup()
    expect(servers.activity()).toEqual([{ id: 'fleet', lastCallAt: null }])
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
    expect(servers.activity()).toEqual([{ id: 'fleet', lastCallAt: clock.now() }])
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

  it('throttle guessing like logins: after five failures from one address the secret is not even checked', async () => {
    const { hasher, events, servers } = setup()
    for (let i = 0; i < DEFAULT_THROTTLE.maxFailuresPerUser; i++) {
      await servers.authenticate('fleet', `guess ${i}`, '10.0.0.9')
    }
    const verifications = hasher.verified.length
    const throttled = await servers.authenticate('fleet', 's3cret', '10.0.0.9')
    expect(throttled).toMatchObject({ ok: false, error: { code: 'throttled' } })
    expect(hasher.verified).toHaveLength(verifications)
    expect(events.ofType('client.throttled')).toHaveLength(1)
    // Another address is not locked out.
    expect((await servers.authenticate('fleet', 's3cret', '10.0.0.10')).ok).toBe(true)
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
