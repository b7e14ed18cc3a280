import { describeCore } from '@flowadmin/testkit'
import { createPostgresStores } from '../src/index.js'
import { freshSchemas, useTestDatabase } from './pg-server.js'

const database = useTestDatabase()
const inFreshSchema = freshSchemas(database, 'core')

// Each core gets a schema of its own.
describeCore('postgres', () => inFreshSchema((url) => createPostgresStores({ url, pool: 2 })))
