import type { AttemptOutcome, ThrottlePolicy } from '@flowadmin/core'
import { createFixedClock } from '@flowadmin/testkit'
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openDatabase, SCHEMA_VERSION } from '../src/index.js'
import { type Child, startChild } from './children.js'
import { ADDRESS, adminLogin, openCore } from './core.js'
import { createTempFolder } from './temp.js'

const temp = createTempFolder()
afterAll(() => temp.remove())

const MODULE = {
  name: '@acme/flow-tools',
  version: '2.0.0',
  sets: [
    { name: 'alpha', types: ['alpha'] },
    { name: 'beta', types: ['beta'] },
    { name: 'gamma', types: ['gamma'] },
  ],
}
const actor = { username: 'admin', clientId: 'service-admin', address: ADDRESS }

describe('two processes on one database file', () => {
  let path: string
  let here: ReturnType<typeof openCore>
  let there: Child

  beforeEach(async () => {
    path = temp.file()
    here = openCore(path, createFixedClock(Date.now())) // the child runs on the system clock
    await here.core.modules.sync([MODULE])
    there = startChild('peer-worker.mjs', [path])
    expect(await there.next()).toEqual({ ready: true })
  })
  afterEach(async () => {
    there.process.stdin?.end()
    const ended = await there.ended
    await here.stores.close()
    expect(ended).toMatchObject({ code: 0, stderr: '' })
  })

  const validHere = async (token: string) => (await here.core.authenticate(token)).ok

  it('a token issued in one is valid in the other; a revoke in either is seen by the other at once', async () => {
    const { token } = (await there.ask({ cmd: 'login' })) as { token: string }
    expect(await validHere(token)).toBe(true)
    const principal = await here.core.authenticate(token)
    if (!principal.ok) throw new Error('not valid here')
    await here.core.revoke(principal.value, token, ADDRESS)
    expect(await there.ask({ cmd: 'authenticate', token })).toEqual({ valid: false })

    const issued = await here.core.login(adminLogin(), ADDRESS)
    if (!issued.ok) throw new Error('login failed')
    const mine = issued.value.accessToken
    expect(await validHere(mine)).toBe(true) // found here first: its record is kept here
    expect(await there.ask({ cmd: 'authenticate', token: mine })).toEqual({ valid: true })
    expect(await there.ask({ cmd: 'revoke', token: mine })).toEqual({})
    expect(await validHere(mine)).toBe(false)
  })

  it('a module toggled in one is seen by the other at once, both ways', async () => {
    expect(await there.ask({ cmd: 'enable', enabled: false })).toEqual({ flags: [false, false, false] })
    const seen = await here.core.modules.get(MODULE.name)
    expect(seen.ok && seen.value.nodes.map((set) => set.enabled)).toEqual([false, false, false])

    await here.core.modules.setNodeSetEnabled(MODULE.name, 'beta', true, actor)
    expect(await there.ask({ cmd: 'flags' })).toEqual({ flags: [false, true, false] })
  })

  describe('deciding login attempts on the same keys at the same time', () => {
    const attempt = { pairKey: 'user 127.0.0.1 admin', addressKey: 'addr 127.0.0.1', knownKey: 'known x' }
    const now = Date.UTC(2026, 0, 1)
    const policy = (pairLimit: number, allowance = 0) => ({
      pairLimit,
      addressLimit: 10_000,
      windowMs: 900_000,
      allowance,
      leaseMs: 30_000,
      knownMs: 900_000,
    })
    const decideHere = async (times: number, rules: ThrottlePolicy, outcome?: AttemptOutcome) => {
      const decisions: string[] = []
      for (let i = 0; i < times; i++) {
        const decision = await here.stores.throttle.begin(attempt, rules, now)
        if (decision.outcome === 'proceed' && outcome)
          await here.stores.throttle.finish(attempt, outcome, rules, now)
        decisions.push(decision.outcome)
      }
      return decisions
    }

    it('loses no failure when both record them', async () => {
      const rules = policy(10_000)
      const theirs = there.ask({
        cmd: 'attempts',
        attempt,
        policy: rules,
        now,
        times: 150,
        outcome: 'failed',
      })
      expect(await decideHere(150, rules, 'failed')).toEqual(Array(150).fill('proceed'))
      expect(await theirs).toEqual({ decisions: Array(150).fill('proceed') })
      // 300 failures: a limit of 300 is reached, one of 301 not yet.
      expect(await here.stores.throttle.begin(attempt, policy(300), now)).toMatchObject({
        outcome: 'throttled',
      })
      expect(await here.stores.throttle.begin(attempt, policy(301), now)).toMatchObject({
        outcome: 'proceed',
      })
    })

    it('lets exactly limit + allowance attempts proceed between them', async () => {
      const rules = policy(20, 5)
      const theirs = there.ask({ cmd: 'attempts', attempt, policy: rules, now, times: 100 })
      const mine = await decideHere(100, rules)
      const { decisions } = (await theirs) as { decisions: string[] }
      const all = [...mine, ...decisions]
      expect(all.filter((outcome) => outcome === 'proceed')).toHaveLength(25)
      expect(all.filter((outcome) => outcome === 'busy')).toHaveLength(175)
    })
  })
})

describe('processes opening a new file at the same moment', () => {
  it('all open it; the schema is created once', async () => {
    const path = temp.file()
    const peers = Array.from({ length: 4 }, () => startChild('peer-worker.mjs', [path]))
    expect(await Promise.all(peers.map((peer) => peer.next()))).toEqual(Array(4).fill({ ready: true }))
    expect(await Promise.all(peers.map((peer) => peer.ask({ cmd: 'flags' })))).toEqual(
      Array(4).fill({ flags: [true, true, true] }),
    )
    for (const peer of peers) peer.process.stdin?.end()
    for (const peer of peers) expect(await peer.ended).toMatchObject({ code: 0, stderr: '' })
    const db = openDatabase(path)
    expect(db.prepare('PRAGMA user_version').get()).toEqual({ user_version: SCHEMA_VERSION })
    db.close()
  })
})
