import { createMemoryStores } from '@flowadmin/adapter-memory'
import { describeCore } from '@flowadmin/testkit'

describeCore('memory', async () => createMemoryStores())
