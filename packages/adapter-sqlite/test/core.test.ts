import { describeCore } from '@flowadmin/testkit'
import { afterAll } from 'vitest'
import { createSqliteStores } from '../src/index.js'
import { createTempFolder } from './temp.js'

const temp = createTempFolder()
afterAll(() => temp.remove())

// Each core gets a database file of its own.
describeCore('sqlite', async () => createSqliteStores(temp.file()))
