// Run by Bun (`bun test`, see test:runtimes), which has both modules built in.
import { describeStoreContract } from '@flowadmin/testkit'
import { createBunSqliteStores } from '../src/bun.js'
import { createNodeSqliteStores } from '../src/node-sqlite.js'
import { tempFolder } from './temp.js'

const temp = tempFolder()

describeStoreContract('bun:sqlite', async () => createBunSqliteStores(temp.file()))
describeStoreContract('node:sqlite', async () => createNodeSqliteStores(temp.file()))
