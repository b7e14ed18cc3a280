export { createMemoryStores, type MemoryStores } from './memory-stores.js'
