// Run by Bun (`bun test`, see test:runtimes).
import { describeFileStoreContract } from '@flowadmin/testkit'
import { createBunSqliteStores } from '../src/bun.js'
import { describeClose } from './close.js'
import { tempFolder } from './temp.js'

const temp = tempFolder()

describeFileStoreContract('bun:sqlite', createBunSqliteStores, temp.file)

describeClose('bun:sqlite', createBunSqliteStores)
