import { createCore, type LoginRequest, type ModuleDescriptor } from '@flowadmin/core'
import { createFakeLoader, createFakeTypeUsage, createPlainHasher } from '@flowadmin/testkit'
import { createPostgresStores, type PostgresOptions } from '../src/index.js'

export const ADDRESS = '127.0.0.1'
export const actor = { username: 'admin', clientId: 'service-admin', address: ADDRESS }

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
 * The whole domain over PostgreSQL, as one server instance runs it (on the system clock, as
 * instances sharing a database do): call it twice for two instances. `admin` has the password `pw`.
 */
export async function openInstance(options: PostgresOptions) {
  const hasher = createPlainHasher()
  const loader = createFakeLoader()
  const stores = await createPostgresStores(options)
  const core = createCore(
    { stores, verifier: hasher, loader, typeUsage: createFakeTypeUsage() },
    { adminAuth: { users: [{ username: 'admin', password: hasher.hash('pw'), permissions: '*' }] } },
  )
  return { core, stores, loader }
}

export type Instance = Awaited<ReturnType<typeof openInstance>>
