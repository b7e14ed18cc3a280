import { createMemoryStores } from '@flowadmin/adapter-memory'
import type { LoginRequest } from '@flowadmin/core'
import { createCoreWithDoubles } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'

const ADDRESS = '10.0.0.7'
const adminLogin: LoginRequest = {
  clientId: 'service-admin',
  grantType: 'password',
  scope: '*',
  username: 'admin',
  password: 'pw',
}

/** A core over memory stores whose throttle store fails to end attempts while `failing` says so. */
function coreWithFailingFinish() {
  const stores = createMemoryStores()
  const finish = stores.throttle.finish.bind(stores.throttle)
  const state = { failing: true }
  stores.throttle.finish = async (...args) => {
    if (state.failing) throw new Error('throttle store unavailable')
    return finish(...args)
  }
  const fixture = createCoreWithDoubles({
    stores,
    adminAuth: (hasher) => ({
      users: [{ username: 'admin', password: hasher.hash('pw'), permissions: '*' }],
    }),
  })
  return { ...fixture, state }
}

describe('a right password whose attempt the throttle store fails to end', () => {
  it('answers the store error and leaves no session behind: no token the client never got', async () => {
    const { core, stores, events } = coreWithFailingFinish()
    await expect(core.login(adminLogin, ADDRESS)).rejects.toThrow('throttle store unavailable')
    expect(await stores.tokens.list(null)).toEqual([])
    expect(events.ofType('login.succeeded')).toEqual([])
  })

  it('logs in as usual once the store answers again, with one session', async () => {
    const { core, stores, state } = coreWithFailingFinish()
    await expect(core.login(adminLogin, ADDRESS)).rejects.toThrow('throttle store unavailable')
    state.failing = false
    const result = await core.login(adminLogin, ADDRESS)
    expect(result).toMatchObject({ ok: true, value: { tokenType: 'Bearer' } })
    expect(await stores.tokens.list(null)).toHaveLength(1)
  })

  it('still answers a wrong password’s store error as an error, saving nothing', async () => {
    const { core, stores } = coreWithFailingFinish()
    await expect(core.login({ ...adminLogin, password: 'wrong' }, ADDRESS)).rejects.toThrow(
      'throttle store unavailable',
    )
    expect(await stores.tokens.list(null)).toEqual([])
  })
})

describe("the verifier and the users' hashes", () => {
  it("is told the users' hashes at the start and at each change of the users", async () => {
    const { core, hasher } = createCoreWithDoubles({
      stores: createMemoryStores(),
      adminAuth: (hasher) => ({
        users: [{ username: 'admin', password: hasher.hash('pw'), permissions: '*' }],
      }),
    })
    expect(hasher.inUse).toEqual([['plain:pw']])
    await core.setUsers([
      { username: 'admin', password: hasher.hash('pw'), permissions: '*' },
      { username: 'editor', password: hasher.hash('ed'), permissions: 'read' },
    ])
    expect(hasher.inUse).toEqual([['plain:pw'], ['plain:pw', 'plain:ed']])
  })
})
