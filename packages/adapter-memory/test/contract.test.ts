import { createMemoryStores } from '@flowadmin/adapter-memory'
import { describeStoreContract } from '@flowadmin/testkit'

describeStoreContract('memory', async () => createMemoryStores())
