import { createCoreOverStores, createFixedClock } from '@flowadmin/testkit'
import { createSqliteStores } from '../src/index.js'

export { adminLogin, toolsModule } from '@flowadmin/testkit'

export const ADDRESS = '127.0.0.1'

/**
 * The whole domain over a SQLite file, as a server process would run it: a fresh core on each
 * call, so closing and calling again is a restart. `admin` has the password `pw`.
 */
export function openCore(path: string, clock = createFixedClock()) {
  const stores = createSqliteStores(path)
  return { ...createCoreOverStores(stores, clock), stores, clock }
}
