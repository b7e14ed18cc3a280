import type {
  ModuleRecord,
  ModuleStore,
  Stores,
  ThrottleCounter,
  ThrottleStore,
  TokenRecord,
  TokenStore,
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

function createTokenStore(): TokenStore {
  const records = new Map<string, TokenRecord>()
  return {
    async save(record) {
      records.set(record.hash, copyToken(record))
    },
    async findByHash(hash) {
      const record = records.get(hash)
      return record ? copyToken(record) : null
    },
    async delete(hash) {
      return records.delete(hash)
    },
    async deleteByUser(username) {
      let removed = 0
      for (const [hash, record] of records) {
        if (record.username === username && records.delete(hash)) removed++
      }
      return removed
    },
    async deleteExpired(now, limit) {
      let removed = 0
      for (const [hash, record] of records) {
        if (removed >= limit) break
        if (record.expiresAt <= now && records.delete(hash)) removed++
      }
      return removed
    },
    async countLive(now) {
      let live = 0
      for (const record of records.values()) if (record.expiresAt > now) live++
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

function createThrottleStore(maxEntries: number): ThrottleStore {
  // Map order is the order windows started (a restarted window moves to the end), so the oldest
  // windows, which are also the first to end, come first.
  const counters = new Map<string, ThrottleCounter>()
  const live = (key: string, now: number) => {
    const counter = counters.get(key)
    return counter && counter.resetAt > now ? counter : null
  }
  /** Makes room for one more key: ended windows go first, then the oldest live ones. */
  const makeRoom = (now: number) => {
    for (const [key, counter] of counters) {
      if (counters.size < maxEntries) return
      if (counter.resetAt > now) break
      counters.delete(key)
    }
    for (const key of counters.keys()) {
      if (counters.size < maxEntries) return
      counters.delete(key)
    }
  }
  return {
    async hit(keys, now, windowMs) {
      return keys.map((key) => {
        const current = live(key, now)
        if (current) {
          current.count++
          return { ...current }
        }
        counters.delete(key)
        makeRoom(now)
        const started = { count: 1, resetAt: now + windowMs }
        counters.set(key, started)
        return { ...started }
      })
    },
    async peek(keys, now) {
      return keys.map((key) => {
        const counter = live(key, now)
        return counter ? { ...counter } : null
      })
    },
    async clear(key) {
      counters.delete(key)
    },
    async deleteExpired(now, limit) {
      let removed = 0
      for (const [key, counter] of counters) {
        if (removed >= limit) break
        if (counter.resetAt <= now && counters.delete(key)) removed++
      }
      return removed
    },
  }
}

/** Options of {@link createMemoryStores}. */
export interface MemoryStoresOptions {
  /**
   * Most throttle counters kept at once, so memory stays bounded under a spray of usernames or
   * addresses. When full, counters whose window ended are dropped first, then the oldest.
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
