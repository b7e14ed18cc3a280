import { createCore, type LoginRequest, type ModuleDescriptor } from '@flowadmin/core'
import {
  createFakeLoader,
  createFakeTypeUsage,
  createFixedClock,
  createPlainHasher,
} from '@flowadmin/testkit'
import { createSqliteStores } from '../src/index.js'

export const ADDRESS = '127.0.0.1'

export const adminLogin = (password = 'pw'): LoginRequest => ({
  grantType: 'password',
  clientId: 'service-admin',
  username: 'admin',
  password,
  scope: '*',
})

export const toolsModule: ModuleDescriptor = {
  name: '@acme/flow-tools',
  version: '2.0.0',
  sets: [
    { name: 'alpha', types: ['alpha-in', 'alpha-out'] },
    { name: 'beta', types: ['beta'] },
  ],
}

/**
 * The whole domain over a SQLite file, as a server process would run it: a fresh core on each
 * call, so closing and calling again is a restart. `admin` has the password `pw`.
 */
export function openCore(path: string, clock = createFixedClock()) {
  const hasher = createPlainHasher()
  const loader = createFakeLoader()
  const stores = createSqliteStores(path)
  const core = createCore(
    { stores, verifier: hasher, loader, typeUsage: createFakeTypeUsage(), clock },
    { adminAuth: { users: [{ username: 'admin', password: hasher.hash('pw'), permissions: '*' }] } },
  )
  return { core, stores, loader, clock }
}
