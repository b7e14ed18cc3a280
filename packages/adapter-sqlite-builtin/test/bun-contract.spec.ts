// Run by Bun (`bun test`, see test:runtimes).
import { describeStoreContract } from '@flowadmin/testkit'
import { createBunSqliteStores } from '../src/bun.js'
import { describeClose } from './close.js'
import { tempFolder } from './temp.js'

const temp = tempFolder()

// A second connection is another handle on the same file.
let file: string
describeStoreContract('bun:sqlite', {
  open: async () => {
    file = temp.file()
    return createBunSqliteStores(file)
  },
  connect: async () => createBunSqliteStores(file),
})

describeClose('bun:sqlite', createBunSqliteStores)
