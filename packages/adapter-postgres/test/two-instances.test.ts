import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { ADDRESS, actor, adminLogin, type Instance, openInstance, toolsModule } from './core.js'

/** The sign-in cookie of the browser a sign-in happens in. */
const BROWSER = 'the-browser-binding-of-this-test-43-characte'

import { EMPTY_TABLES, useTestDatabase } from './pg-server.js'
import { startTcpProxy, type TcpProxy } from './tcp-proxy.js'

const database = useTestDatabase()

describe('two instances on one database', () => {
  let a: Instance
  let b: Instance
  const open: Instance[] = []
  const openOne = async (url = database.current().url) => {
    const instance = await openInstance({ url, pool: 4, timeoutMs: 2000 })
    open.push(instance)
    return instance
  }
  beforeEach(async () => {
    a = await openOne()
    await database.current().query(EMPTY_TABLES)
    b = await openOne()
  })
  afterEach(async () => {
    for (const instance of open.splice(0)) await instance.stores.close()
  })

  const issue = async (instance: Instance) => {
    const issued = await instance.core.login(adminLogin(), ADDRESS)
    if (!issued.ok) throw new Error(`login failed: ${issued.error.code}`)
    return issued.value.accessToken
  }

  it('accept a second-factor code once, even when both are asked for it at once', async () => {
    await a.core.mfa.reset('admin')
    const onA = await a.core.authenticate(await issue(a))
    if (!onA.ok || onA.value.kind !== 'user') throw new Error('the session is not valid')
    const started = await a.core.mfa.startTotp(onA.value)
    if (!started.ok) throw new Error(started.error.code)
    // Begun on A, confirmed on B.
    const onB = await b.core.authenticate(await issue(b))
    if (!onB.ok || onB.value.kind !== 'user') throw new Error('the session is not valid')
    const confirmCode = a.totp.codeAt(started.value.secret, Date.now())
    const confirmed = await b.core.mfa.confirmTotp(onB.value, confirmCode, ADDRESS)
    if (!confirmed.ok) throw new Error(confirmed.error.code)

    // The next step's code (within the window), offered to both at once: accepted once.
    const code = a.totp.codeAt(started.value.secret, Date.now() + 30_000)
    const answers = await Promise.all(
      [a, b, a, b].map((instance) =>
        instance.core.mfa.verify('admin', code, { clientId: null, address: ADDRESS }),
      ),
    )
    expect(answers.filter((answer) => answer.ok)).toHaveLength(1)
    expect(answers.filter((answer) => !answer.ok)).toEqual([
      { ok: false, error: { code: 'invalid_code' } },
      { ok: false, error: { code: 'invalid_code' } },
      { ok: false, error: { code: 'invalid_code' } },
    ])

    // A sign-in whose password was given on A takes its second factor on either, once.
    const { username = '', password: typed = '' } = adminLogin()
    const password = await a.core.signIn.password(
      { username, password: typed, clientId: 'service-editor' },
      BROWSER,
      ADDRESS,
    )
    if (!password.ok || password.value.step !== 'second_factor') throw new Error('no second factor asked')
    const recovery = confirmed.value.recoveryCodes[0] ?? ''
    const [first, second] = await Promise.all([
      b.core.signIn.secondFactor(BROWSER, password.value.ticket, recovery, ADDRESS),
      a.core.signIn.secondFactor(BROWSER, password.value.ticket, recovery, ADDRESS),
    ])
    expect([first.step, second.step].sort()).toEqual(['expired', 'verified'])
    await a.core.mfa.reset('admin')
  })

  it('a token issued on A authenticates on B; revoked on B, it is refused on A at once', async () => {
    const token = await issue(a)
    const onB = await b.core.authenticate(token)
    if (!onB.ok) throw new Error(`the token is refused on B: ${onB.error.code}`)
    expect(onB.value).toMatchObject({ username: 'admin' })
    await b.core.revoke(onB.value, token, ADDRESS)
    expect(await a.core.authenticate(token)).toEqual({
      ok: false,
      error: { code: 'unauthenticated', reason: 'invalid' },
    })
  })

  it('counts failed logins across both: the limit is reached whichever instance they hit', async () => {
    for (let i = 0; i < 5; i++) {
      const instance = i % 2 === 0 ? a : b
      expect(await instance.core.login(adminLogin('wrong'), ADDRESS)).toMatchObject({
        ok: false,
        error: { code: 'invalid_credentials' },
      })
    }
    // Five failures in all (three on A, two on B): the sixth attempt is throttled on either.
    expect(await a.core.login(adminLogin(), ADDRESS)).toMatchObject({
      ok: false,
      error: { code: 'throttled' },
    })
    expect(await b.core.login(adminLogin(), ADDRESS)).toMatchObject({
      ok: false,
      error: { code: 'throttled' },
    })
  })

  it('shares the session inventory and API tokens: created on A, listed and used on B, ended on B for A', async () => {
    const session = await issue(a)
    const principal = await a.core.authenticate(session)
    if (!principal.ok) throw new Error('the session is not valid')
    const created = await a.core.tokens.create(principal.value, { name: 'deploy bot' }, ADDRESS)
    if (!created.ok) throw new Error(`creating an API token failed: ${created.error.code}`)

    const onB = await b.core.authenticate(created.value.token)
    if (!onB.ok) throw new Error(`the token is refused on B: ${onB.error.code}`)
    expect(onB.value).toMatchObject({ username: 'admin' })
    const listed = await b.core.tokens.list(onB.value, 'admin', ADDRESS)
    expect(listed.ok && listed.value.map((view) => [view.kind, view.name]).sort()).toEqual([
      ['api', 'deploy bot'],
      ['session', null],
    ])
    // Every token of the user ended on B: the session issued on A is refused there at once.
    expect(await b.core.tokens.revokeUser(onB.value, 'admin', ADDRESS)).toEqual({ ok: true, value: 2 })
    expect((await a.core.authenticate(session)).ok).toBe(false)
    expect((await a.core.authenticate(created.value.token)).ok).toBe(false)
  })

  it('serves on B the module state A wrote', async () => {
    await a.core.modules.sync([toolsModule])
    await b.core.modules.sync([toolsModule])
    expect(await a.core.modules.setNodeSetEnabled(toolsModule.name, 'beta', false, actor)).toMatchObject({
      ok: true,
    })
    const seen = await b.core.modules.get(toolsModule.name)
    expect(seen.ok && seen.value.nodes.map((set) => [set.name, set.enabled])).toEqual([
      ['alpha', true],
      ['beta', false],
    ])
  })

  it('B loads the node sets A enables within a second, by the announcement alone', async () => {
    await a.core.modules.sync([toolsModule])
    await a.core.modules.setModuleEnabled(toolsModule.name, false, actor)
    const c = await openOne()
    await c.core.modules.sync([toolsModule])
    expect(c.loader.loads).toEqual([])
    const watch = c.stores.watchModules((module) => c.core.modules.loadEnabled(module))
    await watch.ready

    const started = Date.now()
    await a.core.modules.setModuleEnabled(toolsModule.name, true, actor)
    await vi.waitFor(
      () => expect(c.loader.loads.sort()).toEqual(['@acme/flow-tools/alpha', '@acme/flow-tools/beta']),
      { timeout: 1000, interval: 10 },
    )
    const view = await c.core.modules.get(toolsModule.name)
    expect(view.ok && view.value.nodes.map((set) => set.loaded)).toEqual([true, true])
    console.info(`node sets loaded on the other instance ${Date.now() - started} ms after the enable`)
  })

  describe('with the listening connection behind a relay', () => {
    let proxy: TcpProxy
    beforeEach(async () => {
      const { hostname, port } = new URL(database.current().url)
      proxy = await startTcpProxy(hostname, Number(port || 5432))
    })
    afterEach(() => proxy.close())

    it('catches up with a change announced while its connection was down, once it reconnects', async () => {
      await a.core.modules.sync([toolsModule])
      await a.core.modules.setModuleEnabled(toolsModule.name, false, actor)
      const url = new URL(database.current().url)
      url.host = `127.0.0.1:${proxy.port}`
      const c = await openOne(url.toString())
      await c.core.modules.sync([toolsModule])
      const lost: string[] = []
      const watch = c.stores.watchModules((module) => c.core.modules.loadEnabled(module), {
        retryMs: 50,
        onError: (message) => lost.push(message),
      })
      await watch.ready

      // The announcement reaches the relay and dies there with every connection through it.
      proxy.pause()
      await a.core.modules.setModuleEnabled(toolsModule.name, true, actor)
      proxy.cut()
      proxy.resume()

      await vi.waitFor(() => expect(c.loader.loads).toHaveLength(2), { timeout: 5000, interval: 20 })
      expect(lost.length).toBeGreaterThan(0)
      const view = await c.core.modules.get(toolsModule.name)
      expect(view.ok && view.value.nodes.every((set) => set.loaded)).toBe(true)
    })
  })
})
