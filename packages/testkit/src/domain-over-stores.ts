// The whole domain over a store adapter's stores, as a server process runs it, for the adapters'
// restart and two-instance tests: the admin's login and a module with node sets to toggle.
import {
  type Clock,
  createCore,
  type LoginRequest,
  type ModuleDescriptor,
  type Stores,
} from '@flowadmin/core'
import { createFakeLoader, createFakeTotp, createFakeTypeUsage, createPlainHasher } from './doubles.js'

/** The password grant of `admin`, whose password is `pw`. */
export const adminLogin = (password = 'pw'): LoginRequest => ({
  grantType: 'password',
  clientId: 'service-admin',
  username: 'admin',
  password,
  scope: '*',
})

/** A scoped module with two node sets. */
export const toolsModule: ModuleDescriptor = {
  name: '@acme/flow-tools',
  version: '2.0.0',
  sets: [
    { name: 'alpha', types: ['alpha-in', 'alpha-out'] },
    { name: 'beta', types: ['beta'] },
  ],
}

/**
 * A core over `stores` with plain passwords, a recording loader and a TOTP port whose codes the
 * test computes (the same in every instance), on `clock` (the system clock when none is given);
 * `admin` has the password `pw` and every permission.
 */
export function createCoreOverStores(stores: Stores, clock?: Clock) {
  const hasher = createPlainHasher()
  const loader = createFakeLoader()
  const totp = createFakeTotp()
  const core = createCore(
    { stores, verifier: hasher, loader, typeUsage: createFakeTypeUsage(), clock, totp },
    { adminAuth: { users: [{ username: 'admin', password: hasher.hash('pw'), permissions: '*' }] } },
  )
  return { core, loader, totp }
}
