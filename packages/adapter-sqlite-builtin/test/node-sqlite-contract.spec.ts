// Run by Bun (`bun test`) and by vitest under Deno (vitest.deno.config.ts), see test:runtimes.
import { describeFileStoreContract } from '@flowadmin/testkit'
import { createNodeSqliteStores } from '../src/node-sqlite.js'
import { describeClose } from './close.js'
import { tempFolder } from './temp.js'

const temp = tempFolder()

describeFileStoreContract('node:sqlite', createNodeSqliteStores, temp.file)

describeClose('node:sqlite', createNodeSqliteStores)
