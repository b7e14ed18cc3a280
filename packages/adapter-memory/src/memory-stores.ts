import {
  attemptCounters,
  type ModuleRecord,
  type ModuleStore,
  type Stores,
  type ThrottleStore,
  type TokenRecord,
  type TokenStore,
  throttleRefusal,
} from '@flowadmin/core'

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
 * A Map that holds at most `maxEntries` keys. Map order is insertion order and a restarted entry
 * is moved to the end; entries of one kind all last alike, so the oldest, at the front, are also
 * the first to end, and making room drops them first. One live iterator walks the front, so each
 * eviction costs O(1) however many entries were deleted before it (a fresh iterator would step
 * over every deleted slot of the table).
 */
function createCappedMap<V>(maxEntries: number, endOf: (value: V) => number) {
  const entries = new Map<string, V>()
  let front = entries.keys()
  const dropOldest = () => {
    let oldest = front.next()
    if (oldest.done) {
      front = entries.keys()
      oldest = front.next()
    }
    if (!oldest.done) entries.delete(oldest.value)
  }
  return {
    entries,
    /** Sets a key anew, at the end of the order. */
    restart(key: string, value: V) {
      entries.delete(key)
      while (entries.size >= maxEntries) dropOldest()
      entries.set(key, value)
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

function createThrottleStore(maxEntries: number): ThrottleStore {
  const counters = createCappedMap<Counter>(maxEntries, (counter) => counter.resetAt)
  const known = createCappedMap<number>(maxEntries, (expiresAt) => expiresAt)
  /** The live counter of a key, as it stands at `now`, or null. */
  const live = (key: string, now: number) => {
    const counter = counters.entries.get(key)
    if (!counter || counter.resetAt <= now) return null
    if (counter.leaseUntil <= now) counter.inFlight = 0
    return counter
  }
  /** The live counter of a key, or a new window started at `now`. */
  const counterOf = (key: string, now: number, windowMs: number) => {
    const current = live(key, now)
    if (current) return current
    const started = { failures: 0, inFlight: 0, resetAt: now + windowMs, leaseUntil: 0 }
    counters.restart(key, started)
    return started
  }

  // Each call runs in one synchronous pass, so no other call sees it half done.
  return {
    async begin(attempt, policy, now) {
      const seen = attemptCounters(attempt, policy).map(({ key, limit }) => ({
        limit,
        state: live(key, now),
      }))
      const refusal = throttleRefusal(seen, policy.allowance)
      if (refusal) return refusal
      for (const { key } of attemptCounters(attempt, policy)) {
        const counter = counterOf(key, now, policy.windowMs)
        counter.inFlight++
        counter.leaseUntil = now + policy.leaseMs
      }
      return { outcome: 'proceed', known: (known.entries.get(attempt.knownKey) ?? 0) > now }
    },
    async finish(attempt, outcome, policy, now) {
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

/** Options of {@link createMemoryStores}. */
export interface MemoryStoresOptions {
  /**
   * Most throttle counters kept at once (and, apart, most known pairs), so memory stays bounded
   * under a spray of usernames or addresses. When full, the oldest are dropped first (windows all
   * last alike, so those that ended go before any live one).
   * Default 100 000.
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
    async close() {},
  }
}
