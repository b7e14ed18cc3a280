// Run by Bun (`bun test`) and by vitest under Deno (vitest.deno.config.ts), see test:runtimes.
import { describeStoreContract } from '@flowadmin/testkit'
import { createNodeSqliteStores } from '../src/node-sqlite.js'
import { describeClose } from './close.js'
import { tempFolder } from './temp.js'

const temp = tempFolder()

// A second connection is another handle on the same file.
let file: string
describeStoreContract('node:sqlite', {
  open: async () => {
    file = temp.file()
    return createNodeSqliteStores(file)
  },
  connect: async () => createNodeSqliteStores(file),
})

describeClose('node:sqlite', createNodeSqliteStores)
