import { describeStoreContract } from '@flowadmin/testkit'
import { createPostgresStores } from '../src/index.js'
import { EMPTY_TABLES, useTestDatabase } from './pg-server.js'

const database = useTestDatabase()

// Each test starts from empty tables in the file's own database; a second connection is a pool
// of its own on it.
describeStoreContract('postgres', {
  open: async () => {
    const stores = await createPostgresStores({ url: database.current().url, pool: 4 })
    await database.current().query(EMPTY_TABLES)
    return stores
  },
  connect: async () => createPostgresStores({ url: database.current().url, pool: 4 }),
})
