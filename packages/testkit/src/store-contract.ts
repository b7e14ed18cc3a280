import type {
  AttemptOutcome,
  AuthorizationRequest,
  IssuedCode,
  LoginAttempt,
  ModuleDescriptor,
  PasswordPassed,
  StartedSignIn,
  Stores,
  ThrottlePolicy,
  TokenRecord,
  WaitingBounds,
} from '@flowadmin/core'
import { SIGN_IN_METHODS } from '@flowadmin/core'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { describeFleetContract } from './fleet-contract.js'
import { describePasskeyContract } from './passkey-contract.js'
import { trailContract } from './trail-contract.js'

/** Stores under test: the three ports plus a way to release them. */
export type OpenedStores = Stores & { close(): Promise<void> }

/** Opens fresh stores under test (empty). */
export type OpenStores = () => Promise<OpenedStores>

/** How the contract reaches a store: fresh stores, and a second connection to the same data. */
export interface StoreFactory {
  /** Fresh stores over empty data. */
  open: OpenStores
  /**
   * Another connection to the data the last `open` returned, as another process or instance
   * would have: another handle on the SQLite file, another PostgreSQL pool (for a store living
   * in the process's memory, the same maps). The racing tests split their calls between both.
   */
  connect: OpenStores
}

const T0 = Date.UTC(2026, 0, 1)
const MINUTE = 60_000

/** A session record for store tests; its id is `id-<hash>` unless overridden. */
export const tokenRecord = (hash: string, overrides: Partial<TokenRecord> = {}): TokenRecord => ({
  hash,
  id: `id-${hash}`,
  kind: 'session',
  name: null,
  username: 'admin',
  clientId: 'service-admin',
  scope: ['*'],
  fingerprint: 'f'.repeat(64),
  createdAt: T0,
  expiresAt: T0 + 10 * MINUTE,
  lastUsedAt: null,
  lastAddress: null,
  agent: null,
  audience: 'flowadmin',
  signIn: 'password',
  ...overrides,
})

/** Bounds no contract test reaches unless it means to. */
const WIDE: WaitingBounds = { perAddress: 1000, total: 1000 }

const authorizationRequest: AuthorizationRequest = {
  clientId: 'fleet',
  redirectUri: 'https://nodered.example/auth/strategy/callback',
  codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
  state: 'ü 🙂 \u0000',
}

/** A started sign-in for store tests, keyed `key`, from 10.0.0.1, ten minutes from T0. */
const signIn = (key: string, overrides: Partial<StartedSignIn> = {}): StartedSignIn => ({
  key,
  address: '10.0.0.1',
  pending: {
    redirectUri: 'https://fa.example/auth/strategy/callback',
    state: `state-${key}`,
    nonce: `nonce-${key}`,
    codeVerifier: `verifier-${key}`,
  },
  returnTo: '/',
  authorization: null,
  expiresAt: T0 + 10 * MINUTE,
  ...overrides,
})

/** A console's one-time code for store tests, keyed `key`, from 10.0.0.1, 30 s from T0. */
const issuedCode = (key: string, overrides: Partial<IssuedCode> = {}): IssuedCode => ({
  key,
  address: '10.0.0.1',
  binding: overrides.authorization ? null : `binding-${key}`,
  owner: { username: 'Zoë', permissions: ['flows.write', 'read'], fingerprint: `sso:${key}:-` },
  authorization: null,
  expiresAt: T0 + 30_000,
  ...overrides,
})

const random: ModuleDescriptor = {
  name: 'node-red-node-random',
  version: '0.4.1',
  sets: [{ name: 'random', types: ['random'] }],
}
const scoped: ModuleDescriptor = {
  name: '@acme/flow-tools',
  version: '2.0.0',
  sets: [
    { name: 'alpha', types: ['alpha-in', 'alpha-out'] },
    { name: 'beta', types: ['beta'] },
    { name: 'gamma', types: [] },
  ],
}

/**
 * The contract every store adapter passes unchanged. Each test opens a fresh store; none depends
 * on another's order. Time is a parameter, so no test sleeps.
 */
export function describeStoreContract(name: string, factory: StoreFactory): void {
  describe(`store contract: ${name}`, () => {
    let stores: OpenedStores
    let others: OpenedStores[] = []
    beforeEach(async () => {
      stores = await factory.open()
    })
    afterEach(async () => {
      for (const other of others) await other.close()
      others = []
      await stores.close()
    })
    /**
     * The stores and a second connection to the same data; `racing(i)` is one of them, taking
     * turns, so that calls made in a row race between the two connections.
     */
    const twoConnections = async () => {
      const other = await factory.connect()
      others.push(other)
      return (i: number) => (i % 2 === 0 ? stores : other)
    }

    describe('tokens', () => {
      it('finds a saved record by its hash, with every field intact', async () => {
        const record = tokenRecord('h1', {
          username: 'Zoë ✓',
          clientId: 'node-red-admin',
          scope: ['read', 'nodes.write'],
        })
        await stores.tokens.save(record)
        expect(await stores.tokens.findByHash('h1')).toEqual(record)
      })

      it('keeps an API token with every field intact, a never-expiring one included', async () => {
        const record = tokenRecord('h1', {
          id: 'Kx9-pub_1',
          kind: 'api',
          name: 'CI deploy ✓',
          scope: ['read'],
          fingerprint: '0a'.repeat(32),
          expiresAt: null,
          lastUsedAt: T0 + MINUTE,
          lastAddress: '2001:db8::1',
          agent: 'curl 8.5.0',
          signIn: null,
        })
        await stores.tokens.save(record)
        expect(await stores.tokens.findByHash('h1')).toEqual(record)
        expect(await stores.tokens.findById('Kx9-pub_1')).toEqual(record)
      })

      it("keeps each record's audience: flowadmin, a resource server's id, or none yet", async () => {
        const records = [
          tokenRecord('h1'),
          tokenRecord('h2', { clientId: 'fleet-east', audience: 'fleet-east ✓' }),
          tokenRecord('h3', { clientId: 'fleet-west', audience: null }),
        ]
        for (const record of records) await stores.tokens.save(record)
        for (const record of records) {
          expect(await stores.tokens.findByHash(record.hash)).toEqual(record)
          expect(await stores.tokens.findById(record.id)).toEqual(record)
        }
        expect((await stores.tokens.list('admin')).map((record) => record.audience)).toEqual([
          'flowadmin',
          'fleet-east ✓',
          null,
        ])
        // Saved again (as the core settles an old record), the new audience replaces the old.
        await stores.tokens.save({ ...records[2], audience: 'fleet-west' } as (typeof records)[number])
        expect(await stores.tokens.findByHash('h3')).toMatchObject({ audience: 'fleet-west' })
      })

      it('keeps how each session was signed in, every method or none', async () => {
        const methods = [...SIGN_IN_METHODS, null]
        const records = methods.map((signIn, i) => tokenRecord(`h${i}`, { createdAt: T0 + i, signIn }))
        for (const record of records) await stores.tokens.save(record)
        for (const record of records) {
          expect(await stores.tokens.findByHash(record.hash)).toEqual(record)
          expect(await stores.tokens.findById(record.id)).toEqual(record)
        }
        expect((await stores.tokens.list('admin')).map((record) => record.signIn)).toEqual(methods)
        // Saved again, the new method replaces the old; a use leaves it as it was.
        await stores.tokens.save({ ...(records[0] as TokenRecord), signIn: 'passkey' })
        await stores.tokens.touch('id-h0', T0 + MINUTE, '10.0.0.9')
        expect(await stores.tokens.findByHash('h0')).toMatchObject({
          signIn: 'passkey',
          lastAddress: '10.0.0.9',
        })
      })

      it('answers null for an unknown hash or id', async () => {
        expect(await stores.tokens.findByHash('nope')).toBeNull()
        expect(await stores.tokens.findById('nope')).toBeNull()
        await stores.tokens.save(tokenRecord('h1'))
        expect(await stores.tokens.findById('h1')).toBeNull()
        expect(await stores.tokens.findByHash('id-h1')).toBeNull()
      })

      it('replaces a record saved again under the same id', async () => {
        await stores.tokens.save(tokenRecord('h1', { id: 'same' }))
        await stores.tokens.save(tokenRecord('h2', { id: 'same', scope: ['read'] }))
        expect(await stores.tokens.findByHash('h1')).toBeNull()
        expect(await stores.tokens.findById('same')).toMatchObject({ hash: 'h2', scope: ['read'] })
        expect(await stores.tokens.list(null)).toHaveLength(1)
      })

      it("lists one user's records or everyone's, oldest first, expired ones included", async () => {
        await stores.tokens.save(tokenRecord('b1', { username: 'bob', createdAt: T0 + 2 }))
        await stores.tokens.save(
          tokenRecord('a2', { username: 'alice', createdAt: T0 + 3, kind: 'api', name: 'n' }),
        )
        await stores.tokens.save(
          tokenRecord('a1', { username: 'alice', createdAt: T0 + 1, expiresAt: T0 - 1 }),
        )
        await stores.tokens.save(tokenRecord('a0', { id: 'z-last', username: 'alice', createdAt: T0 + 1 }))
        await stores.tokens.save(tokenRecord('c1', { username: 'carol', createdAt: T0, expiresAt: null }))
        const ids = (records: TokenRecord[]) => records.map((record) => record.id)
        expect(ids(await stores.tokens.list('alice'))).toEqual(['id-a1', 'z-last', 'id-a2'])
        expect(ids(await stores.tokens.list(null))).toEqual(['id-c1', 'id-a1', 'z-last', 'id-b1', 'id-a2'])
        expect(await stores.tokens.list('nobody')).toEqual([])
        expect((await stores.tokens.list('alice'))[2]).toEqual(
          tokenRecord('a2', { username: 'alice', createdAt: T0 + 3, kind: 'api', name: 'n' }),
        )
      })

      it('names every user holding a record, sorted, each once', async () => {
        expect(await stores.tokens.usernames()).toEqual([])
        await stores.tokens.save(tokenRecord('c1', { username: 'carol' }))
        await stores.tokens.save(tokenRecord('a1', { username: 'alice' }))
        await stores.tokens.save(tokenRecord('a2', { username: 'alice' }))
        await stores.tokens.save(tokenRecord('z1', { username: 'Zoë' }))
        expect(await stores.tokens.usernames()).toEqual(['Zoë', 'alice', 'carol'])
        await stores.tokens.deleteByUser('alice')
        expect(await stores.tokens.usernames()).toEqual(['Zoë', 'carol'])
      })

      it('records a use on one record, changing nothing else; an unknown id is a no-op', async () => {
        await stores.tokens.save(tokenRecord('h1'))
        await stores.tokens.save(tokenRecord('h2'))
        await stores.tokens.touch('id-h1', T0 + MINUTE, '192.0.2.7')
        await stores.tokens.touch('unknown', T0 + MINUTE, '192.0.2.7')
        expect(await stores.tokens.findByHash('h1')).toEqual(
          tokenRecord('h1', { lastUsedAt: T0 + MINUTE, lastAddress: '192.0.2.7' }),
        )
        await stores.tokens.touch('id-h1', T0 + 2 * MINUTE, '::1')
        expect(await stores.tokens.findById('id-h1')).toMatchObject({
          lastUsedAt: T0 + 2 * MINUTE,
          lastAddress: '::1',
        })
        expect(await stores.tokens.findByHash('h2')).toEqual(tokenRecord('h2'))
        expect(await stores.tokens.list(null)).toHaveLength(2)
      })

      it('replaces a record saved again under the same hash', async () => {
        await stores.tokens.save(tokenRecord('h1', { scope: ['read'] }))
        await stores.tokens.save(tokenRecord('h1', { scope: ['*'], username: 'other' }))
        expect(await stores.tokens.findByHash('h1')).toMatchObject({ scope: ['*'], username: 'other' })
      })

      it('hands out copies: changing a returned record changes nothing stored', async () => {
        await stores.tokens.save(tokenRecord('h1'))
        const found = await stores.tokens.findByHash('h1')
        found?.scope.push('write')
        expect((await stores.tokens.findByHash('h1'))?.scope).toEqual(['*'])
      })

      it('deletes a record by its id once: true the first time, false after', async () => {
        await stores.tokens.save(tokenRecord('h1'))
        await stores.tokens.save(tokenRecord('h2'))
        expect(await stores.tokens.delete('h1')).toBe(false) // by id, never by hash
        expect(await stores.tokens.delete('id-h1')).toBe(true)
        expect(await stores.tokens.delete('id-h1')).toBe(false)
        expect(await stores.tokens.findByHash('h1')).toBeNull()
        expect(await stores.tokens.findById('id-h1')).toBeNull()
        expect(await stores.tokens.findByHash('h2')).not.toBeNull()
      })

      it('deletes every record of one user and no other', async () => {
        await stores.tokens.save(tokenRecord('a1', { username: 'alice' }))
        await stores.tokens.save(tokenRecord('a2', { username: 'alice' }))
        await stores.tokens.save(tokenRecord('b1', { username: 'bob' }))
        expect(await stores.tokens.deleteByUser('alice')).toBe(2)
        expect(await stores.tokens.deleteByUser('alice')).toBe(0)
        expect(await stores.tokens.findByHash('a1')).toBeNull()
        expect(await stores.tokens.findById('id-a2')).toBeNull()
        expect(await stores.tokens.findByHash('b1')).not.toBeNull()
        expect(await stores.tokens.list(null)).toHaveLength(1)
      })

      it('deletes records expired at or before now, and only those: never-expiring ones stay', async () => {
        await stores.tokens.save(tokenRecord('past', { expiresAt: T0 - 1 }))
        await stores.tokens.save(tokenRecord('edge', { expiresAt: T0 }))
        await stores.tokens.save(tokenRecord('live', { expiresAt: T0 + 1 }))
        await stores.tokens.save(tokenRecord('never', { expiresAt: null }))
        expect(await stores.tokens.deleteExpired(T0, 100)).toBe(2)
        expect(await stores.tokens.findByHash('never')).not.toBeNull()
        expect(await stores.tokens.findByHash('past')).toBeNull()
        expect(await stores.tokens.findByHash('edge')).toBeNull()
        expect(await stores.tokens.findByHash('live')).not.toBeNull()
      })

      it('deletes expired records in batches no larger than the limit', async () => {
        for (let i = 0; i < 7; i++) await stores.tokens.save(tokenRecord(`old${i}`, { expiresAt: T0 - i }))
        await stores.tokens.save(tokenRecord('live', { expiresAt: T0 + MINUTE }))
        expect(await stores.tokens.deleteExpired(T0, 3)).toBe(3)
        expect(await stores.tokens.deleteExpired(T0, 3)).toBe(3)
        expect(await stores.tokens.deleteExpired(T0, 3)).toBe(1)
        expect(await stores.tokens.deleteExpired(T0, 3)).toBe(0)
        expect(await stores.tokens.findByHash('live')).not.toBeNull()
      })

      it('counts the records of each kind that are live at now, never-expiring ones included', async () => {
        expect(await stores.tokens.countLive(T0)).toEqual({ session: 0, api: 0 })
        await stores.tokens.save(tokenRecord('past', { expiresAt: T0 - 1 }))
        await stores.tokens.save(tokenRecord('edge', { expiresAt: T0 }))
        await stores.tokens.save(tokenRecord('live1', { expiresAt: T0 + 1 }))
        await stores.tokens.save(tokenRecord('live2', { expiresAt: T0 + MINUTE }))
        await stores.tokens.save(tokenRecord('api1', { kind: 'api', name: 'ci', expiresAt: null }))
        await stores.tokens.save(tokenRecord('api2', { kind: 'api', name: 'old', expiresAt: T0 - MINUTE }))
        expect(await stores.tokens.countLive(T0)).toEqual({ session: 2, api: 1 })
        await stores.tokens.delete('id-live1')
        expect(await stores.tokens.countLive(T0)).toEqual({ session: 1, api: 1 })
        expect(await stores.tokens.countLive(T0 - MINUTE)).toEqual({ session: 3, api: 1 })
      })

      it('lets exactly one of racing deletes of the same record succeed, over two connections', async () => {
        const racing = await twoConnections()
        await stores.tokens.save(tokenRecord('h1'))
        const outcomes = await Promise.all(
          Array.from({ length: 10 }, (_, i) => racing(i).tokens.delete('id-h1')),
        )
        expect(outcomes.filter(Boolean)).toHaveLength(1)
        expect(await stores.tokens.findByHash('h1')).toBeNull()
        expect(await racing(1).tokens.findByHash('h1')).toBeNull()
      })

      it('keeps every record of racing saves, over two connections', async () => {
        const racing = await twoConnections()
        await Promise.all(Array.from({ length: 20 }, (_, i) => racing(i).tokens.save(tokenRecord(`h${i}`))))
        for (const connection of [racing(0), racing(1)]) {
          const listed = await connection.tokens.list(null)
          expect(listed.map((record) => record.hash).sort()).toEqual(
            Array.from({ length: 20 }, (_, i) => `h${i}`).sort(),
          )
        }
      })
    })

    describe('modules', () => {
      it('knows no module until one is recorded', async () => {
        expect(await stores.modules.find(random.name)).toBeNull()
        expect(await stores.modules.list()).toEqual([])
      })

      it('records a discovered module with its sets enabled, in order', async () => {
        const stored = await stores.modules.upsert(scoped)
        const expected = {
          name: '@acme/flow-tools',
          version: '2.0.0',
          sets: [
            {
              id: '@acme/flow-tools/alpha',
              name: 'alpha',
              module: '@acme/flow-tools',
              types: ['alpha-in', 'alpha-out'],
              enabled: true,
            },
            {
              id: '@acme/flow-tools/beta',
              name: 'beta',
              module: '@acme/flow-tools',
              types: ['beta'],
              enabled: true,
            },
            {
              id: '@acme/flow-tools/gamma',
              name: 'gamma',
              module: '@acme/flow-tools',
              types: [],
              enabled: true,
            },
          ],
        }
        expect(stored).toEqual(expected)
        expect(await stores.modules.find('@acme/flow-tools')).toEqual(expected)
      })

      it('keeps enabled flags when a module is recorded again; new sets start enabled, gone sets go', async () => {
        await stores.modules.upsert(scoped)
        await stores.modules.setEnabled(scoped.name, ['alpha', 'beta'], false)
        const again = await stores.modules.upsert({
          name: scoped.name,
          version: '2.1.0',
          sets: [
            { name: 'beta', types: ['beta', 'beta2'] },
            { name: 'alpha', types: ['alpha-in'] },
            { name: 'delta', types: ['delta'] },
          ],
        })
        expect(again.version).toBe('2.1.0')
        expect(again.sets.map((set) => [set.name, set.enabled, set.types])).toEqual([
          ['beta', false, ['beta', 'beta2']],
          ['alpha', false, ['alpha-in']],
          ['delta', true, ['delta']],
        ])
        expect(await stores.modules.find(scoped.name)).toEqual(again)
      })

      it('lists every module sorted by name', async () => {
        await stores.modules.upsert(random)
        await stores.modules.upsert(scoped)
        await stores.modules.upsert({ name: 'a-first', version: '1.0.0', sets: [] })
        expect((await stores.modules.list()).map((module) => module.name)).toEqual([
          '@acme/flow-tools',
          'a-first',
          'node-red-node-random',
        ])
      })

      it('changes the enabled flag of the named sets only, and persists it', async () => {
        await stores.modules.upsert(scoped)
        const updated = await stores.modules.setEnabled(scoped.name, ['alpha', 'gamma', 'no-such-set'], false)
        expect(updated?.sets.map((set) => set.enabled)).toEqual([false, true, false])
        expect((await stores.modules.find(scoped.name))?.sets.map((set) => set.enabled)).toEqual([
          false,
          true,
          false,
        ])
        const back = await stores.modules.setEnabled(scoped.name, ['alpha', 'gamma'], true)
        expect(back?.sets.every((set) => set.enabled)).toBe(true)
      })

      it('answers null when changing a module it does not know, and creates nothing', async () => {
        expect(await stores.modules.setEnabled('missing', ['x'], false)).toBeNull()
        expect(await stores.modules.find('missing')).toBeNull()
      })

      it('touches no other module', async () => {
        await stores.modules.upsert(random)
        await stores.modules.upsert(scoped)
        await stores.modules.setEnabled(scoped.name, ['alpha', 'beta', 'gamma'], false)
        expect((await stores.modules.find(random.name))?.sets[0]?.enabled).toBe(true)
      })

      it('forgets a removed module', async () => {
        await stores.modules.upsert(random)
        expect(await stores.modules.remove(random.name)).toBe(true)
        expect(await stores.modules.remove(random.name)).toBe(false)
        expect(await stores.modules.find(random.name)).toBeNull()
        expect(await stores.modules.list()).toEqual([])
        const again = await stores.modules.upsert(random)
        expect(again.sets[0]?.enabled).toBe(true)
      })

      it('hands out copies: changing a returned module changes nothing stored', async () => {
        const stored = await stores.modules.upsert(scoped)
        ;(stored.sets[0] as { enabled: boolean }).enabled = false
        stored.sets[1]?.types.push('intruder')
        expect(await stores.modules.find(scoped.name)).toMatchObject({
          sets: [{ enabled: true }, { enabled: true, types: ['beta'] }, { enabled: true }],
        })
      })

      it('applies racing multi-set changes whole, over two connections: every reader sees all sets alike', async () => {
        const racing = await twoConnections()
        await stores.modules.upsert(scoped)
        const all = scoped.sets.map((set) => set.name)
        const results = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            i % 3 === 2
              ? racing(i).modules.find(scoped.name)
              : racing(i).modules.setEnabled(scoped.name, all, i % 3 === 0),
          ),
        )
        for (const module of results) {
          const flags = new Set(module?.sets.map((set) => set.enabled))
          expect(flags.size).toBe(1)
        }
        const final = await stores.modules.find(scoped.name)
        expect(new Set(final?.sets.map((set) => set.enabled)).size).toBe(1)
      })
    })

    describeFleetContract(() => stores, twoConnections)
    describePasskeyContract(() => stores, twoConnections)

    describe('throttle', () => {
      const WINDOW = 15 * MINUTE
      const LEASE = 30_000
      const KNOWN = 30 * 24 * 60 * MINUTE
      const policy: ThrottlePolicy = {
        pairLimit: 3,
        addressLimit: 5,
        windowMs: WINDOW,
        allowance: 2,
        leaseMs: LEASE,
        knownMs: KNOWN,
      }
      const attempt = (pair = 'admin', address = '127.0.0.1'): LoginAttempt => ({
        pairKey: `user ${address} ${pair}`,
        addressKey: `addr ${address}`,
        knownKey: `known ${address} ${pair}`,
      })
      const begin = (at: LoginAttempt, now = T0) => stores.throttle.begin(at, policy, now)
      const finish = (at: LoginAttempt, outcome: AttemptOutcome, now = T0) =>
        stores.throttle.finish(at, outcome, policy, now)
      /** One attempt that begins, is verified and ends as given; the decision when it could not begin. */
      const tryOnce = async (at: LoginAttempt, outcome: AttemptOutcome, now = T0) => {
        const decision = await begin(at, now)
        if (decision.outcome === 'proceed') await finish(at, outcome, now)
        return decision
      }
      const proceed = (known = false) => ({ outcome: 'proceed', known })

      it('lets a new pair proceed, not known', async () => {
        expect(await begin(attempt())).toEqual(proceed())
      })

      it('throttles a pair once its failures reach the limit, until its window ends (at retryAt exactly)', async () => {
        for (let i = 0; i < 3; i++) expect(await tryOnce(attempt(), 'failed', T0 + i)).toEqual(proceed())
        expect(await begin(attempt(), T0 + MINUTE)).toEqual({ outcome: 'throttled', retryAt: T0 + WINDOW })
        // The pair only: the same user from elsewhere and another user from here still proceed.
        expect(await begin(attempt('admin', '10.0.0.9'), T0 + MINUTE)).toEqual(proceed())
        expect(await begin(attempt('editor'), T0 + MINUTE)).toEqual(proceed())
        expect(await begin(attempt(), T0 + WINDOW - 1)).toEqual({
          outcome: 'throttled',
          retryAt: T0 + WINDOW,
        })
        expect(await begin(attempt(), T0 + WINDOW)).toEqual(proceed())
      })

      it('throttles an address once its failures reach the limit, whatever the usernames', async () => {
        for (let i = 0; i < 5; i++) expect(await tryOnce(attempt(`user${i}`), 'failed')).toEqual(proceed())
        expect(await begin(attempt('someone-new'), T0 + 1)).toEqual({
          outcome: 'throttled',
          retryAt: T0 + WINDOW,
        })
        expect(await begin(attempt('someone-new', '10.0.0.9'), T0 + 1)).toEqual(proceed())
      })

      it('tells when the last closed window ends', async () => {
        await tryOnce(attempt('a'), 'failed', T0)
        await tryOnce(attempt('b'), 'failed', T0)
        for (let i = 0; i < 3; i++) await tryOnce(attempt(), 'failed', T0 + MINUTE)
        // The address window began at T0, the pair's a minute later: both are closed now.
        expect(await begin(attempt(), T0 + 2 * MINUTE)).toEqual({
          outcome: 'throttled',
          retryAt: T0 + MINUTE + WINDOW,
        })
      })

      it('a success clears the pair, leaves the address counting and makes the pair known', async () => {
        await tryOnce(attempt(), 'failed')
        await tryOnce(attempt(), 'failed')
        expect(await tryOnce(attempt(), 'succeeded', T0 + 1)).toEqual(proceed())
        expect(await begin(attempt(), T0 + 2)).toEqual(proceed(true))
        await finish(attempt(), 'failed', T0 + 2)
        // The pair starts over: three more failures before it closes...
        await tryOnce(attempt(), 'failed', T0 + 3)
        expect(await tryOnce(attempt(), 'failed', T0 + 4)).toEqual(proceed(true))
        // ... by then the address holds five failures (two before the success, three after) and closes.
        expect(await begin(attempt('other'), T0 + 5)).toEqual({ outcome: 'throttled', retryAt: T0 + WINDOW })
      })

      it('knows a pair for knownMs after its last success, and only that pair', async () => {
        await tryOnce(attempt(), 'succeeded', T0)
        expect(await tryOnce(attempt(), 'abandoned', T0 + KNOWN - 1)).toEqual(proceed(true))
        expect(await tryOnce(attempt('admin', '10.0.0.9'), 'abandoned', T0 + 1)).toEqual(proceed())
        expect(await tryOnce(attempt('Admin'), 'abandoned', T0 + 1)).toEqual(proceed())
        expect(await tryOnce(attempt(), 'abandoned', T0 + KNOWN)).toEqual(proceed())
        // A later success extends it; an earlier one arriving late does not shorten it.
        await tryOnce(attempt(), 'succeeded', T0 + KNOWN)
        await tryOnce(attempt(), 'succeeded', T0 + 1)
        expect(await tryOnce(attempt(), 'abandoned', 2 * KNOWN - 1 + T0)).toEqual(proceed(true))
      })

      it('answers busy, never throttled, while attempts in flight fill limit + allowance; abandoned ones record nothing', async () => {
        for (let i = 0; i < 5; i++) expect(await begin(attempt())).toEqual(proceed())
        expect(await begin(attempt())).toEqual({ outcome: 'busy' })
        await finish(attempt(), 'abandoned')
        expect(await begin(attempt())).toEqual(proceed())
        for (let i = 0; i < 5; i++) await finish(attempt(), 'abandoned')
        // Nothing was recorded: three failures still close the pair, not fewer.
        await tryOnce(attempt(), 'failed')
        await tryOnce(attempt(), 'failed')
        expect(await tryOnce(attempt(), 'failed')).toEqual(proceed())
        expect(await begin(attempt())).toMatchObject({ outcome: 'throttled' })
      })

      it('counts the failures of attempts already in flight: at most limit + allowance are verified', async () => {
        for (let i = 0; i < 5; i++) await begin(attempt())
        for (let i = 0; i < 5; i++) await finish(attempt(), 'failed')
        expect(await begin(attempt())).toMatchObject({ outcome: 'throttled' })
      })

      it('forgets attempts in flight once none began for leaseMs', async () => {
        for (let i = 0; i < 5; i++) await begin(attempt(), T0)
        expect(await begin(attempt(), T0 + LEASE - 1)).toEqual({ outcome: 'busy' })
        expect(await begin(attempt(), T0 + LEASE)).toEqual(proceed())
        // A late finish of a forgotten attempt never takes the count below zero.
        for (let i = 0; i < 6; i++) await finish(attempt(), 'abandoned', T0 + LEASE)
        for (let i = 0; i < 5; i++) expect(await begin(attempt(), T0 + LEASE)).toEqual(proceed())
        expect(await begin(attempt(), T0 + LEASE)).toEqual({ outcome: 'busy' })
      })

      it('decides racing attempts one at a time, over two connections', async () => {
        const racing = await twoConnections()
        const decisions = await Promise.all(
          Array.from({ length: 40 }, (_, i) => racing(i).throttle.begin(attempt(), policy, T0)),
        )
        expect(decisions.filter((d) => d.outcome === 'proceed')).toHaveLength(5)
        expect(decisions.filter((d) => d.outcome === 'busy')).toHaveLength(35)
        await Promise.all(
          Array.from({ length: 5 }, (_, i) => racing(i).throttle.finish(attempt(), 'failed', policy, T0)),
        )
        expect(await begin(attempt())).toMatchObject({ outcome: 'throttled' })
        // The address counted all five failures too, and reached its limit.
        expect(await begin(attempt('other'))).toMatchObject({ outcome: 'throttled' })
      })

      it('deletes ended windows and forgotten pairs in batches no larger than the limit', async () => {
        for (let i = 0; i < 3; i++)
          await tryOnce(attempt(`old${i}`, `10.0.0.${i}`), 'failed', T0 - WINDOW - i)
        await tryOnce(attempt('gone', '10.0.1.1'), 'succeeded', T0 - KNOWN)
        await tryOnce(attempt(), 'failed', T0)
        // Ended: three pairs, four addresses (with the success's), one known pair.
        expect(await stores.throttle.deleteExpired(T0, 3)).toBe(3)
        expect(await stores.throttle.deleteExpired(T0, 3)).toBe(3)
        expect(await stores.throttle.deleteExpired(T0, 3)).toBe(2)
        expect(await stores.throttle.deleteExpired(T0, 3)).toBe(0)
        for (let i = 0; i < 2; i++) await tryOnce(attempt(), 'failed', T0)
        expect(await begin(attempt(), T0)).toMatchObject({ outcome: 'throttled' })
      })

      it('keeps keys of any text apart, however alike', async () => {
        const alike = ['user ::1 admin', 'user ::1 admin ', 'user ::1 Admin', 'ü 🙂', 'user ::1 admin\u0000']
        const of = (i: number): LoginAttempt => ({
          pairKey: alike[i] as string,
          addressKey: `addr ${i}`,
          knownKey: `known ${alike[i]}`,
        })
        // Only the key at index 3 reaches the limit; only the key at index 1 logs in.
        for (let n = 0; n < 3; n++) await tryOnce(of(3), 'failed')
        await tryOnce(of(1), 'succeeded')
        const decisions = await Promise.all(alike.map(async (_, i) => tryOnce(of(i), 'abandoned', T0 + 1)))
        expect(decisions).toEqual([
          proceed(),
          proceed(true),
          proceed(),
          { outcome: 'throttled', retryAt: T0 + WINDOW },
          proceed(),
        ])
      })
    })

    describe('sso', () => {
      it('binds a name to the first identity that claims it, for good, whichever connection asks', async () => {
        const racing = await twoConnections()
        expect(await stores.sso.claimName('alice', 'identity-1', T0)).toBe('identity-1')
        expect(await racing(1).sso.claimName('alice', 'identity-2', T0 + MINUTE)).toBe('identity-1')
        expect(await stores.sso.claimName('alice', 'identity-1', T0 + 2 * MINUTE)).toBe('identity-1')
        expect(await stores.sso.claimName('bob', 'identity-2', T0)).toBe('identity-2')
      })

      it('gives a name claimed by many at once to exactly one identity', async () => {
        const racing = await twoConnections()
        const answers = await Promise.all(
          Array.from({ length: 20 }, (_, i) => racing(i).sso.claimName('carol', `identity-${i}`, T0)),
        )
        expect(new Set(answers).size).toBe(1)
        expect(answers[0]).toMatch(/^identity-\d+$/)
      })

      it('keeps names of any text apart, however alike', async () => {
        const alike = ['admin', 'admin ', 'Admin', 'ü 🙂', 'admin\u0000', 'admin\\u0000']
        for (const [i, name] of alike.entries()) await stores.sso.claimName(name, `identity-${i}`, T0)
        for (const [i, name] of alike.entries())
          expect(await stores.sso.claimName(name, 'late', T0)).toBe(`identity-${i}`)
      })

      it('remembers a logout token until its time ends, once across connections', async () => {
        const racing = await twoConnections()
        const first = await Promise.all(
          Array.from({ length: 10 }, (_, i) => racing(i).sso.rememberLogout('jti-1', T0 + MINUTE, T0)),
        )
        expect(first.filter(Boolean)).toHaveLength(1)
        expect(await stores.sso.rememberLogout('jti-1', T0 + 2 * MINUTE, T0 + MINUTE - 1)).toBe(false)
        expect(await stores.sso.rememberLogout('jti-2', T0 + MINUTE, T0)).toBe(true)
        // Its time ended: remembered again, from now on.
        expect(await stores.sso.rememberLogout('jti-1', T0 + 3 * MINUTE, T0 + MINUTE)).toBe(true)
        expect(await stores.sso.rememberLogout('jti-1', T0 + 3 * MINUTE, T0 + 2 * MINUTE)).toBe(false)
      })

      it('forgets a logout token on request, so it is taken as new again', async () => {
        expect(await stores.sso.rememberLogout('jti-3', T0 + MINUTE, T0)).toBe(true)
        await stores.sso.forgetLogout('jti-3')
        await stores.sso.forgetLogout('never-seen')
        expect(await stores.sso.rememberLogout('jti-3', T0 + MINUTE, T0)).toBe(true)
        expect(await stores.sso.rememberLogout('jti-3', T0 + MINUTE, T0)).toBe(false)
      })

      it('deletes logout tokens whose time ended in batches no larger than the limit, and keeps names', async () => {
        for (let i = 0; i < 5; i++) await stores.sso.rememberLogout(`old-${i}`, T0 + i, T0 - MINUTE)
        await stores.sso.rememberLogout('live', T0 + MINUTE, T0)
        await stores.sso.claimName('dan', 'identity-1', T0)
        expect(await stores.sso.deleteExpired(T0 + 4, 3)).toBe(3)
        expect(await stores.sso.deleteExpired(T0 + 4, 3)).toBe(2)
        expect(await stores.sso.deleteExpired(T0 + 4, 3)).toBe(0)
        expect(await stores.sso.rememberLogout('live', T0 + 2 * MINUTE, T0 + 4)).toBe(false)
        expect(await stores.sso.claimName('dan', 'identity-2', T0)).toBe('identity-1')
      })

      it('takes a started sign-in once, with every field intact, whichever connection asks first', async () => {
        const racing = await twoConnections()
        const started = signIn('b1', { authorization: authorizationRequest })
        expect(await stores.sso.saveSignIn(started, WIDE, T0)).toBe('saved')
        const taken = await Promise.all(
          Array.from({ length: 10 }, (_, i) => racing(i).sso.takeSignIn('b1', T0 + MINUTE)),
        )
        expect(taken.filter((one) => one !== null)).toEqual([started])
        expect(await stores.sso.takeSignIn('b1', T0 + MINUTE)).toBeNull()
        const console = signIn('b2', { returnTo: '/console/tokens?x=1' })
        await racing(1).sso.saveSignIn(console, WIDE, T0)
        expect(await stores.sso.takeSignIn('b2', T0)).toEqual(console)
      })

      it('never gives a sign-in whose time ended', async () => {
        await stores.sso.saveSignIn(signIn('b1', { expiresAt: T0 + MINUTE }), WIDE, T0)
        expect(await stores.sso.takeSignIn('b1', T0 + MINUTE)).toBeNull()
        expect(await stores.sso.takeSignIn('nobody', T0)).toBeNull()
      })

      it('bounds the sign-ins of one address, and all of them, refusing new ones and dropping none', async () => {
        const bounds = { perAddress: 3, total: 5 }
        for (let i = 0; i < 3; i++)
          expect(await stores.sso.saveSignIn(signIn(`a${i}`, { address: '10.0.0.1' }), bounds, T0)).toBe(
            'saved',
          )
        expect(await stores.sso.saveSignIn(signIn('a3', { address: '10.0.0.1' }), bounds, T0)).toBe(
          'address_full',
        )
        for (let i = 0; i < 2; i++)
          expect(await stores.sso.saveSignIn(signIn(`b${i}`, { address: '10.0.0.2' }), bounds, T0)).toBe(
            'saved',
          )
        expect(await stores.sso.saveSignIn(signIn('c0', { address: '10.0.0.3' }), bounds, T0)).toBe('full')
        // Every one saved is still there; a finished one makes room for its address.
        expect(await stores.sso.takeSignIn('a0', T0)).not.toBeNull()
        expect(await stores.sso.saveSignIn(signIn('a4', { address: '10.0.0.1' }), bounds, T0)).toBe('saved')
        for (const key of ['a1', 'a2', 'a4', 'b0', 'b1'])
          expect(await stores.sso.takeSignIn(key, T0)).toMatchObject({ key })
        // Expired ones count for nothing.
        for (let i = 0; i < 3; i++)
          await stores.sso.saveSignIn(signIn(`x${i}`, { address: '10.0.0.1', expiresAt: T0 + 1 }), bounds, T0)
        expect(await stores.sso.saveSignIn(signIn('late', { address: '10.0.0.1' }), bounds, T0 + 1)).toBe(
          'saved',
        )
      })

      it('holds one address to its bound when its sign-ins are saved over two connections at once', async () => {
        const racing = await twoConnections()
        const bounds = { perAddress: 3, total: 100 }
        const saved = await Promise.all(
          Array.from({ length: 12 }, (_, i) =>
            racing(i).sso.saveSignIn(signIn(`r${i}`, { address: '2001:db8::/64' }), bounds, T0),
          ),
        )
        expect(saved.filter((outcome) => outcome === 'saved')).toHaveLength(3)
        expect(saved.filter((outcome) => outcome === 'address_full')).toHaveLength(9)
      })

      it('takes a one-time code once across connections, and only for its client', async () => {
        const racing = await twoConnections()
        const code = issuedCode('c1', { authorization: authorizationRequest })
        expect(await stores.sso.saveCode(code, WIDE, T0)).toBe('saved')
        // Looking leaves it; the console (null) and another client cannot take it.
        expect(await racing(1).sso.findCode('c1', T0)).toEqual(code)
        expect(await stores.sso.takeCode('c1', null, T0)).toBeNull()
        expect(await stores.sso.takeCode('c1', 'other-fleet', T0)).toBeNull()
        const taken = await Promise.all(
          Array.from({ length: 10 }, (_, i) => racing(i).sso.takeCode('c1', 'fleet', T0 + 1)),
        )
        expect(taken.filter((one) => one !== null)).toEqual([code])
        expect(await stores.sso.findCode('c1', T0 + 1)).toBeNull()

        const console = issuedCode('c2')
        await stores.sso.saveCode(console, WIDE, T0)
        expect(await stores.sso.takeCode('c2', 'fleet', T0)).toBeNull()
        const spent = await Promise.all(
          Array.from({ length: 4 }, (_, i) => racing(i).sso.takeCode('c2', null, T0)),
        )
        expect(spent.filter((one) => one !== null)).toEqual([console])
      })

      it('neither finds nor takes a code whose time ended, and bounds codes apart from sign-ins', async () => {
        await stores.sso.saveCode(issuedCode('c1', { address: '10.0.0.5', expiresAt: T0 + 30_000 }), WIDE, T0)
        expect(await stores.sso.findCode('c1', T0 + 30_000)).toBeNull()
        expect(await stores.sso.takeCode('c1', null, T0 + 30_000)).toBeNull()
        const bounds = { perAddress: 1, total: 10 }
        expect(await stores.sso.saveSignIn(signIn('s1'), bounds, T0)).toBe('saved')
        expect(await stores.sso.saveCode(issuedCode('c2'), bounds, T0)).toBe('saved')
        expect(await stores.sso.saveCode(issuedCode('c3'), bounds, T0)).toBe('address_full')
        expect(
          await stores.sso.saveCode(
            issuedCode('c4', { address: '10.0.0.9' }),
            { perAddress: 1, total: 1 },
            T0,
          ),
        ).toBe('full')
      })

      it('deletes sign-ins and codes whose time ended in batches no larger than the limit, and keeps live ones', async () => {
        for (let i = 0; i < 3; i++)
          await stores.sso.saveSignIn(signIn(`old-${i}`, { expiresAt: T0 + i }), WIDE, T0)
        for (let i = 0; i < 2; i++)
          await stores.sso.saveCode(issuedCode(`old-${i}`, { expiresAt: T0 + i }), WIDE, T0)
        await stores.sso.saveSignIn(signIn('live'), WIDE, T0)
        await stores.sso.saveCode(issuedCode('live'), WIDE, T0)
        expect(await stores.sso.deleteExpiredSignIns(T0 + 3, 4)).toBe(4)
        expect(await stores.sso.deleteExpiredSignIns(T0 + 3, 4)).toBe(1)
        expect(await stores.sso.deleteExpiredSignIns(T0 + 3, 4)).toBe(0)
        expect(await stores.sso.takeSignIn('live', T0 + 3)).toMatchObject({ key: 'live' })
        expect(await stores.sso.takeCode('live', null, T0 + 3)).toMatchObject({ key: 'live' })
      })
    })

    describe('trail', () => {
      trailContract(
        () => stores.trail,
        async () => (await twoConnections())(1).trail,
      )
    })

    describe('factors', () => {
      it('keeps an enrolment unconfirmed until one code confirms it, then keeps it', async () => {
        expect(await stores.factors.findTotp('alice')).toBeNull()
        expect(await stores.factors.startTotp('alice', 'sealed-1', T0)).toBe(true)
        expect(await stores.factors.findTotp('alice')).toEqual({
          username: 'alice',
          secret: 'sealed-1',
          createdAt: T0,
          confirmedAt: null,
          lastStep: null,
        })
        // An unconfirmed factor accepts no step, and a new enrolment replaces it.
        expect(await stores.factors.useTotpStep('alice', 100)).toBe(false)
        expect(await stores.factors.startTotp('alice', 'sealed-2', T0 + MINUTE)).toBe(true)
        // The code was checked against the replaced secret: not confirmed.
        expect(await stores.factors.confirmTotp('alice', 'sealed-1', 100, T0 + MINUTE)).toBe(false)
        expect(await stores.factors.confirmTotp('alice', 'sealed-2', 100, T0 + 2 * MINUTE)).toBe(true)
        expect(await stores.factors.confirmTotp('alice', 'sealed-2', 101, T0 + 2 * MINUTE)).toBe(false)
        expect(await stores.factors.findTotp('alice')).toEqual({
          username: 'alice',
          secret: 'sealed-2',
          createdAt: T0 + MINUTE,
          confirmedAt: T0 + 2 * MINUTE,
          lastStep: 100,
        })
        // A confirmed factor is not replaced by a new enrolment.
        expect(await stores.factors.startTotp('alice', 'sealed-3', T0 + 3 * MINUTE)).toBe(false)
        expect((await stores.factors.findTotp('alice'))?.secret).toBe('sealed-2')
        expect(await stores.factors.findTotp('bob')).toBeNull()
      })

      it('accepts each step once and never an earlier one, whichever connection asks', async () => {
        const racing = await twoConnections()
        await stores.factors.startTotp('alice', 'sealed', T0)
        await stores.factors.confirmTotp('alice', 'sealed', 100, T0)
        expect(await racing(1).factors.useTotpStep('alice', 100)).toBe(false)
        expect(await racing(1).factors.useTotpStep('alice', 99)).toBe(false)
        expect(await racing(1).factors.useTotpStep('alice', 101)).toBe(true)
        expect(await stores.factors.useTotpStep('alice', 101)).toBe(false)
        expect(await stores.factors.useTotpStep('alice', 103)).toBe(true)
        expect(await racing(1).factors.useTotpStep('alice', 102)).toBe(false)
        expect((await racing(1).factors.findTotp('alice'))?.lastStep).toBe(103)
        expect(await stores.factors.useTotpStep('nobody', 104)).toBe(false)
      })

      it('accepts a step offered at once on both connections exactly once', async () => {
        const racing = await twoConnections()
        await stores.factors.startTotp('carol', 'sealed', T0)
        await stores.factors.confirmTotp('carol', 'sealed', 10, T0)
        for (const step of [11, 12, 13]) {
          const answers = await Promise.all(
            Array.from({ length: 10 }, (_, i) => racing(i).factors.useTotpStep('carol', step)),
          )
          expect(answers.filter(Boolean)).toHaveLength(1)
        }
        expect((await stores.factors.findTotp('carol'))?.lastStep).toBe(13)
      })

      it('uses up each recovery code once, even when offered at once on both connections', async () => {
        const racing = await twoConnections()
        const hashes = Array.from({ length: 10 }, (_, i) => `hash-${i}`)
        await stores.factors.replaceRecoveryCodes('dan', hashes, T0)
        expect(await stores.factors.countRecoveryCodes('dan')).toBe(10)
        const answers = await Promise.all(
          Array.from({ length: 10 }, (_, i) => racing(i).factors.useRecoveryCode('dan', 'hash-3')),
        )
        expect(answers.filter(Boolean)).toHaveLength(1)
        expect(await racing(1).factors.countRecoveryCodes('dan')).toBe(9)
        expect(await stores.factors.useRecoveryCode('dan', 'hash-3')).toBe(false)
        expect(await stores.factors.useRecoveryCode('dan', 'unknown')).toBe(false)
        // Another person's code is not this person's.
        expect(await stores.factors.useRecoveryCode('erin', 'hash-4')).toBe(false)
        expect(await stores.factors.useRecoveryCode('dan', 'hash-4')).toBe(true)
        // New codes replace the old ones, all of them.
        await stores.factors.replaceRecoveryCodes('dan', ['new-1', 'new-2'], T0 + MINUTE)
        expect(await stores.factors.countRecoveryCodes('dan')).toBe(2)
        expect(await stores.factors.useRecoveryCode('dan', 'hash-5')).toBe(false)
        expect(await stores.factors.useRecoveryCode('dan', 'new-2')).toBe(true)
      })

      it('deletes every factor of one person, and only theirs', async () => {
        for (const name of ['frank', 'grace']) {
          await stores.factors.startTotp(name, `sealed-${name}`, T0)
          await stores.factors.confirmTotp(name, `sealed-${name}`, 5, T0)
          await stores.factors.replaceRecoveryCodes(name, ['a', 'b'], T0)
        }
        expect(await stores.factors.deleteFactors('frank')).toBe(true)
        expect(await stores.factors.deleteFactors('frank')).toBe(false)
        expect(await stores.factors.findTotp('frank')).toBeNull()
        expect(await stores.factors.countRecoveryCodes('frank')).toBe(0)
        expect(await stores.factors.useRecoveryCode('frank', 'a')).toBe(false)
        expect((await stores.factors.findTotp('grace'))?.lastStep).toBe(5)
        expect(await stores.factors.countRecoveryCodes('grace')).toBe(2)
        // A new enrolment may begin again.
        expect(await stores.factors.startTotp('frank', 'sealed-again', T0 + MINUTE)).toBe(true)
      })

      const pendingSignIn = (overrides: Partial<PasswordPassed> = {}): PasswordPassed => ({
        username: 'alice',
        clientId: 'service-admin',
        scope: ['*'],
        address: '10.0.0.1',
        agent: 'Firefox 140 on Linux',
        createdAt: T0,
        expiresAt: T0 + MINUTE,
        ...overrides,
      })

      it('gives a pending sign-in back once, whichever connection asks, until its time ends', async () => {
        const racing = await twoConnections()
        await stores.factors.savePendingSignIn('ticket-1', pendingSignIn())
        await stores.factors.savePendingSignIn(
          'ticket-2',
          pendingSignIn({ username: 'bob', agent: null, scope: ['read'] }),
        )
        const taken = await Promise.all(
          Array.from({ length: 10 }, (_, i) => racing(i).factors.takePendingSignIn('ticket-1', T0 + 1)),
        )
        expect(taken.filter((signIn) => signIn !== null)).toEqual([pendingSignIn()])
        expect(await racing(1).factors.takePendingSignIn('ticket-1', T0 + 2)).toBeNull()
        expect(await racing(1).factors.takePendingSignIn('ticket-2', T0 + 2)).toEqual(
          pendingSignIn({ username: 'bob', agent: null, scope: ['read'] }),
        )
        // One whose time ended is not given back, and is gone.
        await stores.factors.savePendingSignIn('ticket-3', pendingSignIn())
        expect(await stores.factors.takePendingSignIn('ticket-3', T0 + MINUTE)).toBeNull()
        expect(await stores.factors.takePendingSignIn('ticket-3', T0)).toBeNull()
        expect(await stores.factors.takePendingSignIn('unknown', T0)).toBeNull()
      })

      it('deletes pending sign-ins whose time ended in batches no larger than the limit', async () => {
        for (let i = 0; i < 5; i++)
          await stores.factors.savePendingSignIn(`old-${i}`, pendingSignIn({ expiresAt: T0 + i }))
        await stores.factors.savePendingSignIn('live', pendingSignIn())
        expect(await stores.factors.deleteExpiredSignIns(T0 + 4, 3)).toBe(3)
        expect(await stores.factors.deleteExpiredSignIns(T0 + 4, 3)).toBe(2)
        expect(await stores.factors.deleteExpiredSignIns(T0 + 4, 3)).toBe(0)
        expect(await stores.factors.takePendingSignIn('live', T0 + 4)).toEqual(pendingSignIn())
      })

      it('keeps names of any text apart, however alike', async () => {
        const alike = ['admin', 'admin ', 'Admin', 'ü 🙂', 'admin\u0000', 'admin\\u0000']
        for (const [i, name] of alike.entries()) {
          await stores.factors.startTotp(name, `sealed-${i}`, T0)
          await stores.factors.replaceRecoveryCodes(name, [`code-${i}`], T0)
        }
        for (const [i, name] of alike.entries()) {
          expect(await stores.factors.findTotp(name)).toMatchObject({ username: name, secret: `sealed-${i}` })
          expect(await stores.factors.useRecoveryCode(name, `code-${(i + 1) % alike.length}`)).toBe(false)
          expect(await stores.factors.useRecoveryCode(name, `code-${i}`)).toBe(true)
        }
      })
    })
  })
}

/**
 * The contract for stores kept in a database file: each test opens `open(file)` over a new file
 * from `newFile()`, and a second connection is another handle on that same file.
 */
export function describeFileStoreContract(
  name: string,
  open: (file: string) => OpenedStores,
  newFile: () => string,
): void {
  let file: string
  describeStoreContract(name, {
    open: async () => {
      file = newFile()
      return open(file)
    },
    connect: async () => open(file),
  })
}
