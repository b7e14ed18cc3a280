import { afterAll, describe, expect, it } from 'vitest'
import { ADDRESS, adminLogin, openCore, toolsModule } from './core.js'
import { createTempFolder } from './temp.js'

const temp = createTempFolder()
afterAll(() => temp.remove())

const actor = { username: 'admin', clientId: 'service-admin', address: ADDRESS }

describe('the domain over SQLite, across restarts', () => {
  it('login → use → restart → still valid → revoke → restart → still revoked', async () => {
    const path = temp.file()
    let run = openCore(path)
    const issued = await run.core.login(adminLogin(), ADDRESS)
    if (!issued.ok) throw new Error(`login failed: ${issued.error.code}`)
    const token = issued.value.accessToken
    expect((await run.core.authorize(token, 'nodes.write', ADDRESS)).ok).toBe(true)
    await run.stores.close()

    run = openCore(path, run.clock)
    const principal = await run.core.authorize(token, 'nodes.write', ADDRESS)
    if (!principal.ok) throw new Error('the token did not survive the restart')
    expect(principal.value).toMatchObject({ kind: 'user', username: 'admin', permissions: ['*'] })
    await run.core.revoke(principal.value, token, ADDRESS)
    expect(await run.core.authorize(token, 'nodes.write', ADDRESS)).toEqual({
      ok: false,
      error: { code: 'unauthenticated', reason: 'invalid' },
    })
    await run.stores.close()

    run = openCore(path, run.clock)
    expect((await run.core.authenticate(token)).ok).toBe(false)
    await run.stores.close()
  })

  it('an expired token stays refused after a restart', async () => {
    const path = temp.file()
    let run = openCore(path)
    const issued = await run.core.login(adminLogin(), ADDRESS)
    if (!issued.ok) throw new Error('login failed')
    await run.stores.close()
    run.clock.advance(issued.value.expiresIn * 1000)
    run = openCore(path, run.clock)
    expect((await run.core.authenticate(issued.value.accessToken)).ok).toBe(false)
    await run.stores.close()
  })

  it('enable/disable state survives a restart; a disabled set is not loaded after it', async () => {
    const path = temp.file()
    let run = openCore(path)
    await run.core.modules.sync([toolsModule])
    const disabled = await run.core.modules.setModuleEnabled(toolsModule.name, false, actor)
    expect(disabled.ok && disabled.value.nodes.map((set) => set.enabled)).toEqual([false, false])
    await run.stores.close()

    run = openCore(path, run.clock)
    await run.core.modules.sync([toolsModule])
    const after = await run.core.modules.get(toolsModule.name)
    expect(after.ok && after.value.nodes.map((set) => [set.enabled, set.loaded])).toEqual([
      [false, false],
      [false, false],
    ])
    expect(run.loader.loads).toEqual([])
    await run.core.modules.setNodeSetEnabled(toolsModule.name, 'beta', true, actor)
    await run.stores.close()

    run = openCore(path, run.clock)
    await run.core.modules.sync([toolsModule])
    const last = await run.core.modules.get(toolsModule.name)
    expect(last.ok && last.value.nodes.map((set) => [set.name, set.enabled, set.loaded])).toEqual([
      ['alpha', false, false],
      ['beta', true, true],
    ])
    await run.stores.close()
  })

  it('failed logins keep counting across a restart', async () => {
    const path = temp.file()
    let run = openCore(path)
    for (let i = 0; i < 5; i++) {
      expect(await run.core.login(adminLogin('wrong'), ADDRESS)).toEqual({
        ok: false,
        error: { code: 'invalid_credentials' },
      })
    }
    await run.stores.close()
    run = openCore(path, run.clock)
    const refused = await run.core.login(adminLogin(), ADDRESS)
    expect(refused).toEqual({ ok: false, error: { code: 'throttled', retryAfter: 900 } })
    await run.stores.close()
  })
})
