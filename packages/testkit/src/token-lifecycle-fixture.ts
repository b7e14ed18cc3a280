// What the parts of the token lifecycle suite share: a team of users, and a core over the stores
// of the running test whose token writes are counted.
import type { AdminAuthOptions, Core, Principal, TokenStore } from '@flowadmin/core'
import { afterEach, beforeEach } from 'vitest'
import { createCoreWithDoubles } from './core-with-doubles.js'
import type { PlainHasher } from './doubles.js'
import type { OpenedStores, OpenStores } from './store-contract.js'

export const ADDRESS = '192.0.2.10'
export const MINUTE = 60_000
export const DAY = 86_400_000

export type UserList = NonNullable<AdminAuthOptions['users']>

/** alice, bob and carol with `*`, dave with `read`; each password is the name followed by `-pw`. */
export const team = (hasher: PlainHasher): UserList =>
  [
    ['alice', '*'],
    ['bob', '*'],
    ['carol', '*'],
    ['dave', 'read'],
  ].map(([username, permissions]) => ({
    username: username as string,
    password: hasher.hash(`${username}-pw`),
    permissions: permissions as string,
  }))

/** The write operations of a token store, counted. */
const WRITES = ['save', 'touch', 'delete', 'deleteByUser', 'deleteExpired'] as const

/** Wraps a token store so each write is counted; reads pass through. */
function countingWrites(store: TokenStore) {
  const writes: string[] = []
  const counted = { ...store } as TokenStore
  for (const name of WRITES) {
    const original = store[name] as (...args: unknown[]) => Promise<unknown>
    ;(counted as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
      writes.push(name)
      return original.apply(store, args)
    }
  }
  return { store: counted, writes }
}

/** What authenticate answers for a token it refuses. */
export const refused = { ok: false, error: { code: 'unauthenticated', reason: 'invalid' } }

/** The running test's stores, and a core over them (see useTokenLifecycle). */
export interface TokenLifecycle {
  /** The stores of the running test. */
  stores(): OpenedStores
  /** The writes made to its token store so far, by name; emptied by setting its length to 0. */
  writes(): string[]
  /** A core over the (write-counting) stores; `seed` differs per start, as randomness would. */
  start(
    users?: (hasher: PlainHasher) => UserList,
    seed?: number,
    auth?: Partial<AdminAuthOptions>,
  ): ReturnType<typeof createCoreWithDoubles>
  /** A session of `username` (whose password is the name followed by `-pw`): its token. */
  login(core: Core, username: string, scope?: string): Promise<string>
  /** Whom `token` authenticates; throws when it is refused. */
  principal(core: Core, token: string): Promise<Principal>
}

/** Opens fresh stores before each test of the enclosing describe and closes them after. */
export function useTokenLifecycle(open: OpenStores): TokenLifecycle {
  let stores: OpenedStores
  let counter: ReturnType<typeof countingWrites>
  beforeEach(async () => {
    stores = await open()
    counter = countingWrites(stores.tokens)
  })
  afterEach(async () => {
    await stores.close()
  })
  return {
    stores: () => stores,
    writes: () => counter.writes,
    start(users = team, seed = 1, auth = {}) {
      return createCoreWithDoubles({
        stores: { ...stores, tokens: counter.store },
        adminAuth: (hasher) => ({ users: users(hasher), ...auth }),
        seed,
      })
    },
    async login(core, username, scope = '*') {
      const result = await core.login(
        { grantType: 'password', clientId: 'service-admin', username, password: `${username}-pw`, scope },
        ADDRESS,
      )
      if (!result.ok) throw new Error(`login of ${username} failed: ${result.error.code}`)
      return result.value.accessToken
    },
    async principal(core, token) {
      const result = await core.authenticate(token, ADDRESS)
      if (!result.ok) throw new Error(`token refused: ${result.error.code}`)
      return result.value
    },
  }
}
