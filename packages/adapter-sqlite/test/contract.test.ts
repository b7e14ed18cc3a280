import { describeStoreContract } from '@flowadmin/testkit'
import { afterAll } from 'vitest'
import { createSqliteStores } from '../src/index.js'
import { createTempFolder } from './temp.js'

const temp = createTempFolder()
afterAll(() => temp.remove())

// A second connection is another handle on the same file.
let file: string
describeStoreContract('sqlite', {
  open: async () => {
    file = temp.file()
    return createSqliteStores(file)
  },
  connect: async () => createSqliteStores(file),
})
