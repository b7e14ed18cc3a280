import { describeFileStoreContract } from '@flowadmin/testkit'
import { afterAll } from 'vitest'
import { createSqliteStores } from '../src/index.js'
import { createTempFolder } from './temp.js'

const temp = createTempFolder()
afterAll(() => temp.remove())

describeFileStoreContract('sqlite', createSqliteStores, () => temp.file())
