// Run by Bun (`bun test`, see test:runtimes).
import { describeStoreContract } from '@flowadmin/testkit'
import { createBunSqliteStores } from '../src/bun.js'
import { tempFolder } from './temp.js'

const temp = tempFolder()

describeStoreContract('bun:sqlite', async () => createBunSqliteStores(temp.file()))
