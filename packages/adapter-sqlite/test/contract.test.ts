import { describeStoreContract } from '@flowadmin/testkit'
import { afterAll } from 'vitest'
import { createSqliteStores } from '../src/index.js'
import { createTempFolder } from './temp.js'

const temp = createTempFolder()
afterAll(() => temp.remove())

describeStoreContract('sqlite', async () => createSqliteStores(temp.file()))
