import { createCoreOverStores } from '@flowadmin/testkit'
import { createPostgresStores, type PostgresOptions } from '../src/index.js'

export { adminLogin, toolsModule } from '@flowadmin/testkit'

export const ADDRESS = '127.0.0.1'
export const actor = { username: 'admin', clientId: 'service-admin', address: ADDRESS }

/**
 * The whole domain over PostgreSQL, as one server instance runs it (on the system clock, as
 * instances sharing a database do): call it twice for two instances. `admin` has the password `pw`.
 */
export async function openInstance(options: PostgresOptions) {
  const stores = await createPostgresStores(options)
  return { ...createCoreOverStores(stores), stores }
}

export type Instance = Awaited<ReturnType<typeof openInstance>>
