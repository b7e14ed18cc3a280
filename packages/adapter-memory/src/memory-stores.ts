import {
  attemptCounters,
  type FactorStore,
  type IssuedCode,
  type ModuleRecord,
  type ModuleStore,
  type PasswordPassed,
  type SsoStore,
  type StartedSignIn,
  type Stores,
  type ThrottleStore,
  type TokenRecord,
  type TokenStore,
  type TotpFactor,
  throttleRefusal,
  type WaitingBounds,
  type WaitingSave,
} from '@flowadmin/core'
import { createFleetStore } from './fleet-store.js'
import { createPasskeyStore } from './passkey-store.js'
import { createTrailStore } from './trail-store.js'

export interface MemoryStores extends Stores {
  /** Nothing to release; present so every adapter closes alike. */
  close(): Promise<void>
}

// Records are copied in and out, so no caller can change what the store holds behind its back.
const copyToken = (record: TokenRecord): TokenRecord => ({ ...record, scope: [...record.scope] })
const copyModule = (module: ModuleRecord): ModuleRecord => ({
  name: module.name,
  version: module.version,
  sets: module.sets.map((set) => ({ ...set, types: [...set.types] })),
})

const byCreation = (a: TokenRecord, b: TokenRecord) =>
  a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

function createTokenStore(): TokenStore {
  const records = new Map<string, TokenRecord>()
  /** hash by id: the second key of every record. */
  const hashes = new Map<string, string>()
  const remove = (hash: string) => {
    const record = records.get(hash)
    if (!record) return false
    records.delete(hash)
    hashes.delete(record.id)
    return true
  }
  return {
    async save(record) {
      remove(record.hash)
      const sameId = hashes.get(record.id)
      if (sameId !== undefined) remove(sameId)
      records.set(record.hash, copyToken(record))
      hashes.set(record.id, record.hash)
    },
    async findByHash(hash) {
      const record = records.get(hash)
      return record ? copyToken(record) : null
    },
    async findById(id) {
      const record = records.get(hashes.get(id) ?? '')
      return record ? copyToken(record) : null
    },
    async list(username) {
      const found: TokenRecord[] = []
      for (const record of records.values()) {
        if (username === null || record.username === username) found.push(copyToken(record))
      }
      return found.sort(byCreation)
    },
    async usernames() {
      return [...new Set([...records.values()].map((record) => record.username))].sort()
    },
    async touch(id, usedAt, address) {
      const record = records.get(hashes.get(id) ?? '')
      if (!record) return
      record.lastUsedAt = usedAt
      record.lastAddress = address
    },
    async delete(id) {
      const hash = hashes.get(id)
      return hash !== undefined && remove(hash)
    },
    async deleteByUser(username) {
      let removed = 0
      for (const [hash, record] of records) {
        if (record.username === username && remove(hash)) removed++
      }
      return removed
    },
    async deleteExpired(now, limit) {
      let removed = 0
      for (const [hash, record] of records) {
        if (removed >= limit) break
        if (record.expiresAt !== null && record.expiresAt <= now && remove(hash)) removed++
      }
      return removed
    },
    async countLive(now) {
      const live = { session: 0, api: 0 }
      for (const record of records.values()) {
        if (record.expiresAt === null || record.expiresAt > now) live[record.kind]++
      }
      return live
    },
  }
}

function createModuleStore(): ModuleStore {
  const modules = new Map<string, ModuleRecord>()
  return {
    async upsert(descriptor) {
      const known = new Map(modules.get(descriptor.name)?.sets.map((set) => [set.name, set.enabled]))
      const module: ModuleRecord = {
        name: descriptor.name,
        version: descriptor.version,
        sets: descriptor.sets.map((set) => ({
          id: `${descriptor.name}/${set.name}`,
          name: set.name,
          module: descriptor.name,
          types: [...set.types],
          enabled: known.get(set.name) ?? true,
        })),
      }
      modules.set(module.name, module)
      return copyModule(module)
    },
    async find(name) {
      const module = modules.get(name)
      return module ? copyModule(module) : null
    },
    async list() {
      return [...modules.values()]
        .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
        .map(copyModule)
    },
    async setEnabled(name, sets, enabled) {
      const module = modules.get(name)
      if (!module) return null
      const names = new Set(sets)
      // One synchronous pass: no other call can observe a half-applied change.
      for (const set of module.sets) if (names.has(set.name)) set.enabled = enabled
      return copyModule(module)
    },
    async remove(name) {
      return modules.delete(name)
    },
  }
}

interface Counter {
  failures: number
  inFlight: number
  resetAt: number
  leaseUntil: number
}

/**
 * A Map of at most `maxEntries` keys (see `restart` and `roomFor`). Map order is insertion order
 * and a restarted entry is moved to the end; entries of one kind all last alike, so the oldest,
 * at the front, are also the first to end. One live iterator walks the front, so each look at the
 * oldest costs O(1) however many entries were deleted before it (a fresh iterator would step over
 * every deleted slot of the table).
 */
function createCappedMap<V>(
  maxEntries: number,
  endOf: (value: V) => number,
  spent: (value: V, now: number) => boolean = (value, now) => endOf(value) <= now,
) {
  const entries = new Map<string, V>()
  let front = entries.entries()
  // The oldest entry as the iterator last saw it; stale once deleted or set anew (moved to the end).
  let head: [string, V] | undefined
  /** The oldest entry, or undefined when there is none. */
  const oldest = (): [string, V] | undefined => {
    while (head === undefined || entries.get(head[0]) !== head[1]) {
      let next = front.next()
      if (next.done) {
        front = entries.entries()
        next = front.next()
      }
      if (next.done) return undefined
      head = next.value
    }
    return head
  }
  const dropOldest = () => {
    const entry = oldest()
    if (entry !== undefined) entries.delete(entry[0])
  }
  return {
    entries,
    /** Sets a key anew, at the end of the order, dropping the oldest entries to make room. */
    restart(key: string, value: V) {
      entries.delete(key)
      if (head?.[0] === key) head = undefined
      while (entries.size >= maxEntries) dropOldest()
      entries.set(key, value)
    },
    /**
     * Makes room for `count` new keys by dropping the oldest entries while they are `spent` at
     * `now`; false when the oldest is not (then nothing else was dropped). A dropped key that
     * `mine` claims is one more to make room for.
     */
    roomFor(count: number, now: number, mine: (key: string) => boolean = () => false): boolean {
      let needed = count
      while (entries.size + needed > maxEntries) {
        const entry = oldest()
        if (entry === undefined || !spent(entry[1], now)) return false
        entries.delete(entry[0])
        if (mine(entry[0])) needed++
      }
      return true
    },
    deleteExpired(now: number, limit: number) {
      let removed = 0
      for (const [key, entry] of entries) {
        if (removed >= limit) break
        if (endOf(entry) <= now && entries.delete(key)) removed++
      }
      return removed
    },
  }
}

/**
 * Throttle counters and known pairs in two capped maps. A live counter is never dropped to make
 * room for another: else a spray of new usernames or addresses would wipe the failures of the
 * key it targets. When live counters fill the map, an attempt that needs a new counter is
 * answered busy (nothing recorded, try again shortly) until a window ends. Only counters that
 * decide nothing make room: windows that ended, and oldest first, live ones that count nothing
 * (no failure, no attempt in flight), which a new window would replace alike. Known pairs only
 * choose a verifier lane: the oldest are forgotten to make room.
 */
function createThrottleStore(maxEntries: number): ThrottleStore {
  const counters = createCappedMap<Counter>(
    maxEntries,
    (counter) => counter.resetAt,
    (counter, now) =>
      counter.resetAt <= now ||
      (counter.failures === 0 && (counter.inFlight === 0 || counter.leaseUntil <= now)),
  )
  const known = createCappedMap<number>(maxEntries, (expiresAt) => expiresAt)
  /** The live counter of a key, as it stands at `now`, or null. */
  const live = (key: string, now: number) => {
    const counter = counters.entries.get(key)
    if (!counter || counter.resetAt <= now) return null
    if (counter.leaseUntil <= now) counter.inFlight = 0
    return counter
  }
  /**
   * The live counter of a key, or a new window started at `now`, at the end of the order. It
   * takes the place of the key's ended window, or of counters that decide nothing; an attempt
   * ending while live ones fill the map records its failure even so, one place over (see `finish`).
   */
  const counterOf = (key: string, now: number, windowMs: number) => {
    const current = live(key, now)
    if (current) return current
    counters.entries.delete(key)
    counters.roomFor(1, now)
    const started = { failures: 0, inFlight: 0, resetAt: now + windowMs, leaseUntil: 0 }
    counters.entries.set(key, started)
    return started
  }

  // Each call runs in one synchronous pass, so no other call sees it half done.
  return {
    async begin(attempt, policy, now) {
      const keys = attemptCounters(attempt, policy)
      const seen = keys.map(({ key, limit }) => ({ limit, state: live(key, now) }))
      const refusal = throttleRefusal(seen, policy.allowance)
      if (refusal) return refusal
      // Ended windows give their place back first; then the new counters need room.
      const fresh = keys.filter((_, index) => seen[index]?.state === null)
      for (const { key } of fresh) counters.entries.delete(key)
      const mine = (key: string) => key === attempt.pairKey || key === attempt.addressKey
      if (!counters.roomFor(fresh.length, now, mine)) return { outcome: 'busy' }
      for (const { key } of keys) {
        const counter = counterOf(key, now, policy.windowMs)
        counter.inFlight++
        counter.leaseUntil = now + policy.leaseMs
      }
      return { outcome: 'proceed', known: (known.entries.get(attempt.knownKey) ?? 0) > now }
    },
    async finish(attempt, outcome, policy, now) {
      // A live counter is missing here only when a success of the pair deleted it meanwhile, or
      // when it counted nothing once this attempt's lease ran out and made room: the failure is
      // recorded all the same, so the map holds at most two counters more per attempt in flight,
      // and never forgets a failure.
      for (const { key } of attemptCounters(attempt, policy)) {
        const counter = counterOf(key, now, policy.windowMs)
        counter.inFlight = Math.max(0, counter.inFlight - 1)
        if (outcome === 'failed') counter.failures++
      }
      if (outcome === 'succeeded') {
        counters.entries.delete(attempt.pairKey)
        const until = Math.max(known.entries.get(attempt.knownKey) ?? 0, now + policy.knownMs)
        known.restart(attempt.knownKey, until)
      }
    },
    async deleteExpired(now, limit) {
      const removed = counters.deleteExpired(now, limit)
      return removed + known.deleteExpired(now, limit - removed)
    },
  }
}

/** A deep copy of plain data (strings, numbers, null, arrays and objects of them). */
const copyPlain = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T

/** Records that wait until they expire, keyed by a hash, each counted against its address. */
function createWaitingRecords<T extends { key: string; address: string; expiresAt: number }>() {
  const records = new Map<string, T>()
  return {
    save(record: T, bounds: WaitingBounds, now: number): WaitingSave {
      let total = 0
      let mine = 0
      for (const other of records.values()) {
        if (other.expiresAt <= now) continue
        total++
        if (other.address === record.address) mine++
      }
      if (mine >= bounds.perAddress) return 'address_full'
      if (total >= bounds.total) return 'full'
      records.set(record.key, copyPlain(record))
      return 'saved'
    },
    find(key: string, now: number): T | null {
      const record = records.get(key)
      return record === undefined || record.expiresAt <= now ? null : copyPlain(record)
    },
    /** Deletes the record under `key` when it is live and `accept` says so, and returns it. */
    take(key: string, now: number, accept: (record: T) => boolean = () => true): T | null {
      const record = records.get(key)
      if (record === undefined) return null
      if (record.expiresAt <= now) {
        records.delete(key)
        return null
      }
      if (!accept(record)) return null
      records.delete(key)
      return record
    },
    deleteExpired(now: number, limit: number): number {
      let removed = 0
      for (const [key, record] of records) {
        if (removed >= limit) break
        if (record.expiresAt <= now && records.delete(key)) removed++
      }
      return removed
    },
  }
}

/** Names bound to identities, logout tokens seen until their time ends, sign-ins under way. */
function createSsoStore(): SsoStore {
  const names = new Map<string, string>()
  const logouts = new Map<string, number>()
  const signIns = createWaitingRecords<StartedSignIn>()
  const codes = createWaitingRecords<IssuedCode>()
  return {
    async claimName(username, identity) {
      const bound = names.get(username)
      if (bound !== undefined) return bound
      names.set(username, identity)
      return identity
    },
    async rememberLogout(key, expiresAt, now) {
      const until = logouts.get(key)
      if (until !== undefined && until > now) return false
      logouts.set(key, expiresAt)
      return true
    },
    async forgetLogout(key) {
      logouts.delete(key)
    },
    async deleteExpired(now, limit) {
      let removed = 0
      for (const [key, until] of logouts) {
        if (removed >= limit) break
        if (until <= now && logouts.delete(key)) removed++
      }
      return removed
    },
    async saveSignIn(signIn, bounds, now) {
      return signIns.save(signIn, bounds, now)
    },
    async takeSignIn(key, now) {
      return signIns.take(key, now)
    },
    async saveCode(code, bounds, now) {
      return codes.save(code, bounds, now)
    },
    async findCode(key, now) {
      return codes.find(key, now)
    },
    async takeCode(key, clientId, now) {
      return codes.take(key, now, (code) => (code.authorization?.clientId ?? null) === clientId)
    },
    async deleteExpiredSignIns(now, limit) {
      const removed = signIns.deleteExpired(now, limit)
      return removed + codes.deleteExpired(now, limit - removed)
    },
  }
}

/** TOTP factors and recovery codes; each call runs to its end before another begins, so it is atomic. */
function createFactorStore(): FactorStore {
  const totp = new Map<string, TotpFactor>()
  const recovery = new Map<string, Set<string>>()
  const pending = new Map<string, PasswordPassed>()
  return {
    async startTotp(username, secret, now) {
      if (totp.get(username)?.confirmedAt != null) return false
      totp.set(username, { username, secret, createdAt: now, confirmedAt: null, lastStep: null })
      return true
    },
    async findTotp(username) {
      const factor = totp.get(username)
      return factor === undefined ? null : { ...factor }
    },
    async confirmTotp(username, secret, step, now) {
      const factor = totp.get(username)
      if (factor === undefined || factor.confirmedAt !== null || factor.secret !== secret) return false
      totp.set(username, { ...factor, confirmedAt: now, lastStep: step })
      return true
    },
    async useTotpStep(username, step) {
      const factor = totp.get(username)
      if (factor === undefined || factor.confirmedAt === null) return false
      if (factor.lastStep !== null && factor.lastStep >= step) return false
      totp.set(username, { ...factor, lastStep: step })
      return true
    },
    async replaceRecoveryCodes(username, hashes) {
      recovery.set(username, new Set(hashes))
    },
    async useRecoveryCode(username, hash) {
      return recovery.get(username)?.delete(hash) ?? false
    },
    async countRecoveryCodes(username) {
      return recovery.get(username)?.size ?? 0
    },
    async deleteFactors(username) {
      const had = totp.delete(username)
      const codes = recovery.get(username)
      recovery.delete(username)
      return had || (codes !== undefined && codes.size > 0)
    },
    async savePendingSignIn(key, signIn) {
      pending.set(key, { ...signIn, scope: [...signIn.scope] })
    },
    async takePendingSignIn(key, now) {
      const signIn = pending.get(key)
      pending.delete(key)
      return signIn === undefined || signIn.expiresAt <= now ? null : signIn
    },
    async deleteExpiredSignIns(now, limit) {
      let removed = 0
      for (const [key, signIn] of pending) {
        if (removed >= limit) break
        if (signIn.expiresAt <= now && pending.delete(key)) removed++
      }
      return removed
    },
  }
}

/** Options of {@link createMemoryStores}. */
export interface MemoryStoresOptions {
  /**
   * Most throttle counters kept at once (and, apart, most known pairs), so memory stays bounded
   * under a spray of usernames or addresses. When full, counters whose window ended make room,
   * oldest first; a live one is never dropped, so a spray cannot wipe the failures of the key it
   * targets: an attempt that needs a new counter is answered busy until a window ends. The oldest
   * known pairs are forgotten. Default 100 000.
   */
  maxThrottleEntries?: number
}

export const DEFAULT_MAX_THROTTLE_ENTRIES = 100_000

/** Every store port over Maps: fast, ephemeral, for tests and embedders. */
export function createMemoryStores(options: MemoryStoresOptions = {}): MemoryStores {
  const maxThrottleEntries = options.maxThrottleEntries ?? DEFAULT_MAX_THROTTLE_ENTRIES
  if (!Number.isSafeInteger(maxThrottleEntries) || maxThrottleEntries < 1) {
    throw new RangeError('maxThrottleEntries must be a whole number from 1')
  }
  return {
    tokens: createTokenStore(),
    modules: createModuleStore(),
    throttle: createThrottleStore(maxThrottleEntries),
    sso: createSsoStore(),
    trail: createTrailStore(),
    fleet: createFleetStore(),
    factors: createFactorStore(),
    passkeys: createPasskeyStore(),
    async close() {},
  }
}
