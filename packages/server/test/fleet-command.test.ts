// `pnpm start:fleet` as a user runs it, in a process group of its own as a shell runs a job: two
// stock Node-RED editors log in with the same flowadmin user, run fleet mode and report to the
// trail (the console's Fleet, Node modules and Activity views show them by one name), Ctrl-C
// (SIGINT to the group) stops every program it started, one program ending stops the others, and
// with --sso the editor's "Sign in with …" goes through flowadmin and the local provider.
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { requireBuild } from './cli-process.js'
import { eventually } from './fleet-setup.js'
import { freePort } from './node-red-process.js'
import { browse, createCookieJar, walkSignIn } from './oidc-provider.js'
import { type ProgramRun, runProgram, stopGroups, until } from './program-process.js'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
/** The node module both editors have (examples/fleet). */
const DEMO = 'node-red-contrib-fleet-demo'

interface Fleet {
  run: ProgramRun
  group: number
  flowadmin: string
  editors: string[]
  /** The pid of each program the command started. */
  pids: number[]
}

/** Starts the command with `args` and waits for its summary. */
async function startFleet(args: string[]): Promise<Fleet> {
  const editorPorts = [await freePort(), await freePort()]
  const run = runProgram(
    'pnpm',
    ['start:fleet', '--port', '0', '--editors', editorPorts.join(','), ...args],
    {
      cwd: ROOT,
      detached: true,
    },
  )
  const group = run.child.pid as number
  const pidsLine = await run.line(/^ {2}pids /)
  const pids = [...pidsLine.matchAll(/ (\d+)(,|$)/g)].map((match) => Number(match[1]))
  started.push(...pids)
  const url = (label: RegExp) => {
    const line = run.stdout.split('\n').find((text) => label.test(text)) ?? ''
    return /(http:\/\/\S+?)\/?$/.exec(line)?.[1] ?? ''
  }
  return {
    run,
    group,
    flowadmin: url(/^ {2}flowadmin \(console and API\)/),
    editors: [url(/^ {2}Node-RED editor 1 /), url(/^ {2}Node-RED editor 2 /)],
    pids,
  }
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** The editor's login form: Node-RED's password grant, answered through flowadmin. */
async function editorLogin(editor: string, username: string, password: string): Promise<Response> {
  return fetch(`${editor}/auth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      client_id: 'node-red-editor',
      grant_type: 'password',
      scope: '*',
      username,
      password,
    }),
  })
}

/** Every program a fleet started (each in a process group of its own), for after a failed test. */
const started: number[] = []

beforeAll(() => requireBuild())
afterAll(async () => {
  await stopGroups()
  for (const pid of started.filter(alive)) process.kill(pid, 'SIGKILL')
})

describe('pnpm start:fleet', () => {
  it('shows two editors that log in with the same flowadmin user; Ctrl-C stops every program', async () => {
    const fleet = await startFleet([])
    expect(fleet.editors.every((editor) => editor.startsWith('http://127.0.0.1:'))).toBe(true)
    expect(fleet.pids).toHaveLength(3)
    expect(fleet.run.stdout).toContain('admin / flowadmin-demo')

    for (const editor of fleet.editors) {
      const login = await editorLogin(editor, 'admin', 'flowadmin-demo')
      expect(login.status, editor).toBe(200)
      const { access_token: token } = (await login.json()) as { access_token: string }
      // The editor's own settings call, with that token: the user is flowadmin's.
      const settings = await fetch(`${editor}/settings`, { headers: { Authorization: `Bearer ${token}` } })
      expect(settings.status, editor).toBe(200)
      expect(((await settings.json()) as { user: unknown }).user).toEqual({
        username: 'admin',
        permissions: '*',
      })
      // A wrong password is refused by the editor, as flowadmin refuses it.
      expect((await editorLogin(editor, 'admin', 'not-the-password')).status, editor).toBe(403)
    }
    // The same user at flowadmin itself.
    const direct = await fetch(`${fleet.flowadmin}/auth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        client_id: 'service-admin',
        grant_type: 'password',
        scope: '*',
        username: 'admin',
        password: 'flowadmin-demo',
      }),
    })
    expect(direct.status).toBe(200)

    // Ctrl-C: the terminal sends SIGINT to the whole job.
    process.kill(-fleet.group, 'SIGINT')
    expect(await fleet.run.exited).toBe(0)
    expect(fleet.run.stdout).toContain('fleet: stopped')
    expect(fleet.run.stderr).not.toContain('ELIFECYCLE')
    await until('every program to end', () => (fleet.pids.some(alive) ? undefined : true))
  })

  it('the console sees both editors as a newcomer would: Fleet lists them, a module disabled there is disabled in both palettes, a deploy is in Activity under the Fleet name', async () => {
    const fleet = await startFleet([])
    expect(fleet.run.stdout).toMatch(/^ {2}Node-RED editor 1 \(editor-1\) http/m)
    const operator = await fetch(`${fleet.flowadmin}/auth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        client_id: 'service-admin',
        grant_type: 'password',
        scope: '*',
        username: 'admin',
        password: 'flowadmin-demo',
      }),
    })
    expect(operator.status).toBe(200)
    const bearer = {
      authorization: `Bearer ${((await operator.json()) as { access_token: string }).access_token}`,
    }
    // The console's Fleet view: both editors, by the names the summary printed, reporting.
    type Listed = Array<{ id: string; resourceServer: string; connected: boolean; lastReport: string | null }>
    const listed = await eventually(
      async () =>
        (await (await fetch(`${fleet.flowadmin}/fleet/instances`, { headers: bearer })).json()) as Listed,
      (list) => list.length === 2 && list.every((one) => one.connected && one.lastReport !== null),
    )
    expect(listed.map((one) => `${one.resourceServer}/${one.id}`)).toEqual([
      'fleet/editor-1',
      'fleet/editor-2',
    ])

    const tokens = await Promise.all(
      fleet.editors.map(async (editor) => {
        const login = await editorLogin(editor, 'admin', 'flowadmin-demo')
        expect(login.status, editor).toBe(200)
        return ((await login.json()) as { access_token: string }).access_token
      }),
    )
    /** The demo module's sets as each editor's palette reads them (GET /nodes/<module>). */
    const palettes = () =>
      Promise.all(
        fleet.editors.map(async (editor, index) => {
          const res = await fetch(`${editor}/nodes/${DEMO}`, {
            headers: { authorization: `Bearer ${tokens[index]}`, accept: 'application/json' },
          })
          const body = (await res.json()) as { nodes: Array<{ name: string; enabled: boolean }> }
          return body.nodes.map((set) => `${set.name}=${set.enabled}`).join(' ')
        }),
      )
    expect(await palettes()).toEqual(['shout=true', 'shout=true'])
    // The console's Node modules view lists it from the editors' reports, and disables it.
    const disabled = await fetch(`${fleet.flowadmin}/nodes/${DEMO}`, {
      method: 'PUT',
      headers: { ...bearer, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: false }),
    })
    expect(disabled.status).toBe(200)
    expect(await eventually(palettes, (now) => now.every((one) => one === 'shout=false'))).toEqual([
      'shout=false',
      'shout=false',
    ])

    // A deploy in either editor: in Activity under the name Fleet lists it by.
    for (const [index, editor] of fleet.editors.entries()) {
      const deploy = await fetch(`${editor}/flows`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${tokens[index]}`,
          'content-type': 'application/json',
          'Node-RED-Deployment-Type': 'full',
        },
        body: JSON.stringify([{ id: `tab-${index}`, type: 'tab', label: `Flow of editor ${index + 1}` }]),
      })
      expect(deploy.status).toBe(204)
      const name = `${listed[index]?.resourceServer}/${listed[index]?.id}`
      const events = await eventually(
        async () => {
          const query = `instance=${encodeURIComponent(name)}&event=flows.set`
          const res = await fetch(`${fleet.flowadmin}/audit?${query}`, { headers: bearer })
          return ((await res.json()) as { events: Array<Record<string, unknown>> }).events
        },
        (found) => found.length > 0,
      )
      expect(events).toEqual([
        expect.objectContaining({ instance: name, actor: 'admin', event: 'flows.set' }),
      ])
    }

    process.kill(-fleet.group, 'SIGINT')
    expect(await fleet.run.exited).toBe(0)
    await until('every program to end', () => (fleet.pids.some(alive) ? undefined : true))
  })

  it('stops the others and says why when one program ends', async () => {
    const fleet = await startFleet([])
    const [flowadmin, editor1, editor2] = fleet.pids as [number, number, number]
    process.kill(editor2, 'SIGKILL')
    expect(await fleet.run.exited).toBe(1)
    expect(fleet.run.stdout).toMatch(/fleet: node-red \d+ ended \(SIGKILL\): stopping the others/)
    await until('the other programs to end', () => (alive(flowadmin) || alive(editor1) ? undefined : true))
  })

  it("with --sso, the editor's sign-in goes through flowadmin and the local provider", async () => {
    const fleet = await startFleet(['--sso', '--provider-port', '0'])
    const [editor] = fleet.editors as [string]
    expect(await (await fetch(`${editor}/auth/login`)).json()).toEqual({
      type: 'strategy',
      prompts: [{ type: 'button', label: 'Sign in with flowadmin', url: 'auth/strategy' }],
    })
    const jar = createCookieJar()
    // The editor's button leads to flowadmin's sign-in page, whose provider button goes on there.
    const page = await walkSignIn(jar, `${editor}/auth/strategy`, 'grace', () => false)
    expect(page.url.startsWith(`${fleet.flowadmin}/auth/authorize?`)).toBe(true)
    const html = await page.res.text()
    expect(html).toContain('Sign in with the demo provider</button>')
    // The page's provider form carries the editor's request in hidden fields, as a browser sends it.
    const provider = html.slice(html.indexOf('/auth/signin/provider'))
    const fields = [...provider.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)].map(
      ([, name = '', value = '']) =>
        [name, value.replace(/&#(\d+);/g, (_all, code) => String.fromCharCode(Number(code)))] as [
          string,
          string,
        ],
    )
    expect(Object.fromEntries(fields)).toMatchObject({ client_id: 'fleet' })
    const pressed = await browse(jar, `${fleet.flowadmin}/auth/signin/provider`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams(fields).toString(),
    })
    expect(pressed.status).toBe(303)
    const walked = await walkSignIn(jar, pressed.headers.get('location') ?? '', 'grace', (url) =>
      url.startsWith(`${editor}/?`),
    )
    const token = new URL(walked.url).searchParams.get('access_token') ?? ''
    expect(token).not.toBe('')
    const settings = await fetch(`${editor}/settings`, { headers: { Authorization: `Bearer ${token}` } })
    expect(((await settings.json()) as { user: unknown }).user).toEqual({
      username: 'grace',
      permissions: '*',
    })
    // The console's own "Sign in with …" is offered too.
    expect(await (await fetch(`${fleet.flowadmin}/auth/login`)).json()).toMatchObject({
      type: 'credentials',
      sso: { type: 'button', label: 'Sign in with the demo provider' },
    })

    process.kill(-fleet.group, 'SIGINT')
    expect(await fleet.run.exited).toBe(0)
    await until('every program to end', () => (fleet.pids.some(alive) ? undefined : true))
  })
})
