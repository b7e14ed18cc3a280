import { createMemoryStores } from '@flowadmin/adapter-memory'
import { describeTokenLifecycle } from '@flowadmin/testkit'

describeTokenLifecycle('memory', async () => createMemoryStores())
