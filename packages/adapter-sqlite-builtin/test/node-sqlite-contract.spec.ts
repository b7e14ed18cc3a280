// Run by Bun (`bun test`) and by vitest under Deno (vitest.deno.config.ts), see test:runtimes.
import { describeStoreContract } from '@flowadmin/testkit'
import { createNodeSqliteStores } from '../src/node-sqlite.js'
import { tempFolder } from './temp.js'

const temp = tempFolder()

describeStoreContract('node:sqlite', async () => createNodeSqliteStores(temp.file()))
