import { describeStoreContract } from '@flowadmin/testkit'
import { createPostgresStores } from '../src/index.js'
import { useTestDatabase } from './pg-server.js'

const database = useTestDatabase()

export const EMPTY_TABLES =
  'TRUNCATE flowadmin_tokens, flowadmin_node_sets, flowadmin_modules, flowadmin_throttle'

// Each test starts from empty tables in the file's own database.
describeStoreContract('postgres', async () => {
  const stores = await createPostgresStores({ url: database.current().url, pool: 4 })
  await database.current().query(EMPTY_TABLES)
  return stores
})
