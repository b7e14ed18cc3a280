export {
  createMemoryStores,
  DEFAULT_MAX_THROTTLE_ENTRIES,
  type MemoryStores,
  type MemoryStoresOptions,
} from './memory-stores.js'
