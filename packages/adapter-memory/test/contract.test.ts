import { createMemoryStores, type MemoryStores } from '@flowadmin/adapter-memory'
import { describeStoreContract } from '@flowadmin/testkit'

// The data lives in the stores' maps: a second connection is the same stores, closed separately.
let current: MemoryStores
describeStoreContract('memory', {
  open: async () => {
    current = createMemoryStores()
    return current
  },
  connect: async () => ({ ...current, close: async () => {} }),
})
