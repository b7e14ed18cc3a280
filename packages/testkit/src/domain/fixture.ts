import type { AdminAuthOptions, ModuleDescriptor, Stores } from '@flowadmin/core'
import { afterEach } from 'vitest'
import { createCoreWithDoubles } from '../core-with-doubles.js'
import type { OpenedStores, OpenStores } from '../store-contract.js'

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

/** A well-formed password-grant request for admin. */
export const adminLogin = (overrides: Record<string, string | undefined> = {}) => ({
  clientId: 'service-admin',
  grantType: 'password',
  scope: '*',
  username: 'admin',
  password: 'pw',
  ...overrides,
})

export interface TestCoreOptions {
  /** Stores to use instead of fresh ones (another core over the same data). */
  stores?: Stores
  failures?: Record<string, string>
  inUse?: string[]
}

/**
 * For one suite: `createTestCore(auth?, options?)` makes a core over fresh stores from `open`, a
 * fixed clock and plain passwords: `admin`/`pw` (`*`), `reader`/`rpw` (`read`); `auth` null turns
 * authentication off. Every store it opened is closed after each test.
 */
export function useTestCore(open: OpenStores) {
  let opened: OpenedStores[] = []
  afterEach(async () => {
    for (const stores of opened) await stores.close()
    opened = []
  })
  return async (auth: Partial<AdminAuthOptions> | null = {}, options: TestCoreOptions = {}) => {
    let stores = options.stores
    if (stores === undefined) {
      const fresh = await open()
      opened.push(fresh)
      stores = fresh
    }
    return createCoreWithDoubles({
      stores,
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
}

export type TestCore = Awaited<ReturnType<ReturnType<typeof useTestCore>>>
