// `flowadmin start --demo`, from the built command: the repository's demo, with its warning.
import * as path from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli, useUserDir } from './cli-process.js'

const WARNING =
  'flowadmin: warning: demo credentials are in use (admin / flowadmin-demo, viewer / flowadmin-view, a published second-factor key); never expose this server\n'

const dir = useUserDir('demo')

describe('flowadmin start --demo', () => {
  it("runs with the demo's settings and says its credentials are in use", async () => {
    const run = runCli(['start', '--demo', '--user-dir', dir.userDir, '--port', '0'])
    const url = /listening on (\S+) \(storage: (\S+), auth: on\)/.exec(
      await run.line(/^flowadmin listening on /),
    )
    expect(url?.[2]).toBe(path.join(dir.userDir, 'flowadmin.db'))
    expect(run.stderr).toContain(WARNING)
    // The demo's user logs in with the demo's password.
    const res = await fetch(`${url?.[1]}/auth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        client_id: 'node-red-admin',
        grant_type: 'password',
        scope: '*',
        username: 'admin',
        password: 'flowadmin-demo',
      }),
    })
    expect(res.status).toBe(200)
  })

  it('refuses --settings beside it, as a usage error', async () => {
    const run = runCli(['start', '--demo', '--settings', 'settings.json', '--user-dir', dir.userDir])
    expect(await run.exited).toBe(2)
    expect(run.stderr).toBe(
      'flowadmin: --demo runs the demo with its own settings; leave out --settings\n' +
        'flowadmin: Run "flowadmin start --help" for usage.\n',
    )
  })
})
