import { describeTokenLifecycle } from '@flowadmin/testkit'
import { createPostgresStores } from '../src/index.js'
import { freshSchemas, useTestDatabase } from './pg-server.js'

const database = useTestDatabase()
const inFreshSchema = freshSchemas(database, 'lifecycle')

describeTokenLifecycle('postgres', () => inFreshSchema((url) => createPostgresStores({ url, pool: 2 })))
