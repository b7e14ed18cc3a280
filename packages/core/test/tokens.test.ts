import { createMemoryStores } from '@flowadmin/adapter-memory'
import { type Digest, LAST_USE_RESOLUTION_MS, type User, webDigest } from '@flowadmin/core'
import { createEventRecorder, createFixedClock, createSeededRandom } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'
import { createTokens } from '../src/tokens/tokens.js'

describe('the Web Crypto digest', () => {
  it('computes HMAC-SHA-256 as RFC 4231 test case 2 gives it', async () => {
    expect(await webDigest.hmacSha256('Jefe', 'what do ya want for nothing?')).toBe(
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    )
  })
})

/** SHA-256 and HMAC stand-ins that cost nothing: a cache test makes tens of thousands of tokens. */
const plainDigest: Digest = {
  sha256: async (text) => `sha(${text})`,
  hmacSha256: async (key, text) => `hmac(${key},${text})`,
}

/** Tokens over a memory store with a fixed clock, counting the uses it writes. */
function tokensFixture(users: Map<string, User>) {
  const store = createMemoryStores().tokens
  let writes = 0
  const touch = store.touch.bind(store)
  store.touch = (...args) => {
    writes++
    return touch(...args)
  }
  const clock = createFixedClock()
  const tokens = createTokens({
    store,
    clock,
    random: createSeededRandom(3),
    digest: plainDigest,
    events: createEventRecorder(),
    users,
    lifetime: 3600,
  })
  return { tokens, store, clock, writes: () => writes }
}

const userOf = (username: string, passwordHash = `plain:${username}`): User => ({
  username,
  passwordHash,
  permissions: ['*'],
})

describe('the caches of the token service', () => {
  it('keep at most 10 000 recent uses when more tokens are used within a minute, each use written once', async () => {
    const admin = userOf('admin')
    const { tokens, clock, writes } = tokensFixture(new Map([['admin', admin]]))
    const issued: string[] = []
    for (let i = 0; i < 25_000; i++)
      issued.push((await tokens.issue(admin, 'service-admin', ['*'], 'a')).accessToken)
    clock.advance(LAST_USE_RESOLUTION_MS)
    for (const token of issued) expect(await tokens.authenticate(token, '10.0.0.1')).not.toBeNull()
    expect(writes()).toBe(25_000)
    expect(tokens.cached().touched).toBeLessThanOrEqual(10_000)
    // Within the minute, a use already written is not written again, whatever the cache forgot.
    clock.advance(1_000)
    for (const token of issued) expect(await tokens.authenticate(token, '10.0.0.2')).not.toBeNull()
    expect(writes()).toBe(25_000)
    expect(tokens.cached().touched).toBeLessThanOrEqual(10_000)
  })

  it('keep the fingerprints of the configured passwords only, however often they change', async () => {
    const users = new Map([['admin', userOf('admin')]])
    const { tokens } = tokensFixture(users)
    let token = ''
    for (let i = 0; i < 1_000; i++) {
      // A reload with a new password: the map is refilled in place, as setUsers does.
      users.set('admin', userOf('admin', `plain:pw-${i}`))
      token = (await tokens.issue(users.get('admin') as User, 'service-admin', ['*'], 'a')).accessToken
    }
    expect(tokens.cached().fingerprints).toBe(1)
    expect(await tokens.authenticate(token, null)).not.toBeNull()
  })

  it('forget the fingerprints of users no longer configured', async () => {
    const users = new Map<string, User>()
    for (let i = 0; i < 500; i++) users.set(`user-${i}`, userOf(`user-${i}`))
    const { tokens } = tokensFixture(users)
    for (const user of users.values()) await tokens.issue(user, 'service-admin', ['*'], 'a')
    expect(tokens.cached().fingerprints).toBe(500)
    const kept = users.get('user-7') as User
    const token = (await tokens.issue(kept, 'service-admin', ['*'], 'a')).accessToken
    users.clear()
    users.set('user-7', kept)
    expect(await tokens.authenticate(token, null)).not.toBeNull()
    expect(tokens.cached().fingerprints).toBe(1)
  })
})
