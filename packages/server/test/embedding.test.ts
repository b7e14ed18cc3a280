// The embedding example of docs/embedding.md, run as an embedder's program would run it: from a
// project whose node_modules hold the built packages, on a real socket.
import { type ChildProcess, spawn } from 'node:child_process'
import { copyFile, mkdir, mkdtemp, readFile, realpath, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { requireBuild } from './cli-process.js'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const EXAMPLE = path.join(ROOT, 'examples', 'embedding.mjs')

/** What the example imports, and where this workspace has each (built, as an install has them). */
const DEPENDENCIES: Record<string, string> = {
  '@flowadmin/core': 'packages/core',
  '@flowadmin/adapter-memory': 'packages/adapter-memory',
  '@flowadmin/adapter-http': 'packages/adapter-http',
  hono: 'packages/adapter-http/node_modules/hono',
  '@hono/node-server': 'packages/server/node_modules/@hono/node-server',
}

let project: string
let child: ChildProcess | null = null

beforeAll(() => requireBuild())
beforeEach(async () => {
  project = await mkdtemp(path.join(tmpdir(), 'flowadmin-embedding-'))
})
afterEach(async () => {
  if (child !== null && child.exitCode === null && child.signalCode === null) {
    const closed = new Promise((resolve) => child?.once('close', resolve))
    child.kill('SIGKILL')
    await closed
  }
  child = null
  await rm(project, { recursive: true, force: true })
})

/** The first ```js block of the "The admin API of another program" section of docs/embedding.md. */
async function docsBlock(): Promise<string> {
  const page = await readFile(path.join(ROOT, 'docs', 'embedding.md'), 'utf8')
  const section = page.split(/^## The admin API of another program$/m)[1]
  if (section === undefined) throw new Error('docs/embedding.md has no such section')
  const block = /^```js\n([\s\S]*?)^```$/m.exec(section)?.[1]
  if (block === undefined) throw new Error('that section has no ```js block')
  return block
}

/** Runs the example in `project` and resolves with the admin URL it prints. */
async function runExample(): Promise<string> {
  for (const [name, dir] of Object.entries(DEPENDENCIES)) {
    const link = path.join(project, 'node_modules', name)
    await mkdir(path.dirname(link), { recursive: true })
    await symlink(await realpath(path.join(ROOT, dir)), link, 'dir')
  }
  await copyFile(EXAMPLE, path.join(project, 'embedding.mjs'))
  const started = spawn(process.execPath, ['embedding.mjs'], {
    cwd: project,
    env: { ...process.env, PORT: '0' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  child = started
  let stdout = ''
  let stderr = ''
  started.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  return new Promise((resolve, reject) => {
    started.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk
      const url = /^admin API on (http:\/\/127\.0\.0\.1:\d+\/admin)$/m.exec(stdout)?.[1]
      if (url !== undefined) resolve(url)
    })
    started.once('close', (code) => reject(new Error(`the example ended (${code}):\n${stdout}${stderr}`)))
  })
}

describe('the embedding example', () => {
  it('is in docs/embedding.md verbatim', async () => {
    expect(await docsBlock()).toBe(await readFile(EXAMPLE, 'utf8'))
  })

  it('serves the admin API below /admin of the host program, over the memory store', async () => {
    const admin = await runExample()
    const host = admin.replace(/\/admin$/, '')

    // The host program's own route is untouched.
    const home = await fetch(`${host}/`)
    expect(await home.text()).toBe('my flow runtime')
    expect((await fetch(`${host}/auth/login`)).status).toBe(404)

    expect(await (await fetch(`${admin}/auth/login`)).json()).toMatchObject({ type: 'credentials' })
    const grant = { client_id: 'service-admin', grant_type: 'password', scope: '*', username: 'admin' }
    const wrong = await fetch(`${admin}/auth/token`, {
      method: 'POST',
      body: new URLSearchParams({ ...grant, password: 'nope' }),
    })
    expect(wrong.status).toBe(401)
    const login = await fetch(`${admin}/auth/token`, {
      method: 'POST',
      body: new URLSearchParams({ ...grant, password: 's3cret' }),
    })
    expect(login.status).toBe(200)
    const { access_token: token } = (await login.json()) as { access_token: string }
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' }

    const sets = (await (await fetch(`${admin}/nodes`, { headers: auth })).json()) as Array<{ id: string }>
    expect(sets.map((set) => set.id)).toEqual(['core-nodes/debug', 'core-nodes/inject'])

    // The embedder's type usage protects `inject`; `debug` may go.
    const refused = await fetch(`${admin}/nodes/core-nodes`, {
      method: 'PUT',
      headers: auth,
      body: '{"enabled":false}',
    })
    expect(refused.status).toBe(400)
    expect(await refused.json()).toMatchObject({ code: 'type_in_use', types: ['inject'] })
    const debug = await fetch(`${admin}/nodes/core-nodes/debug`, {
      method: 'PUT',
      headers: auth,
      body: '{"enabled":false}',
    })
    expect(await debug.json()).toMatchObject({ id: 'core-nodes/debug', enabled: false, loaded: true })

    const document = (await (await fetch(`${admin}/openapi.json`)).json()) as { servers: unknown }
    expect(document.servers).toEqual([{ url: '/admin', description: 'This service' }])
  })
})
