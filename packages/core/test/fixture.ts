import { createMemoryStores } from '@flowadmin/adapter-memory'
import type { AdminAuthOptions, ModuleDescriptor, Stores } from '@flowadmin/core'
import { createCoreWithDoubles } from '@flowadmin/testkit'

export const ADDRESS = '127.0.0.2'
export const OTHER_ADDRESS = '127.0.0.3'

export const GREETING: ModuleDescriptor = {
  name: 'flowadmin-example-greeting',
  version: '1.0.0',
  sets: [{ name: 'greeting', types: ['greeting'] }],
}
export const TOOLS: ModuleDescriptor = {
  name: '@acme/text-tools',
  version: '2.3.0',
  sets: [
    { name: 'upper', types: ['upper-case'] },
    { name: 'lower', types: ['lower-case', 'title-case'] },
  ],
}

/** A core over the memory stores, a fixed clock and plain passwords: `admin`/`pw` (`*`), `reader`/`rpw` (`read`). */
export function createTestCore(
  auth: Partial<AdminAuthOptions> | null = {},
  options: { stores?: Stores; failures?: Record<string, string>; inUse?: string[] } = {},
) {
  return createCoreWithDoubles({
    stores: options.stores ?? createMemoryStores(),
    adminAuth: (hasher) =>
      auth === null
        ? null
        : {
            users: [
              { username: 'admin', password: hasher.hash('pw'), permissions: '*' },
              { username: 'reader', password: hasher.hash('rpw'), permissions: ['read'] },
            ],
            ...auth,
          },
    loaderFailures: options.failures,
    typesInUse: options.inUse,
  })
}

/** A well-formed password-grant request for admin. */
export const adminLogin = (overrides: Record<string, string | undefined> = {}) => ({
  clientId: 'service-admin',
  grantType: 'password',
  scope: '*',
  username: 'admin',
  password: 'pw',
  ...overrides,
})
