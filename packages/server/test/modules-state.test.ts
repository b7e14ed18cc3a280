// Stored module state outlives discovery: the built server started with node_modules renamed away
// (or a module's folder gone), then with it back, and `flowadmin modules forget` for operators.
import { readFile, rename, rm, writeFile } from 'node:fs/promises'
import * as path from 'node:path'
import { describe, expect, it } from 'vitest'
import { runCli, startBuiltServer, startCli, useUserDir } from './cli-process.js'
import { SHOUT, TOOLS, writeEcosystemUserDir } from './ecosystem.js'

const dir = useUserDir('state', writeEcosystemUserDir)

type NodeSet = { id: string; enabled: boolean; loaded: boolean; err?: string }

/** Starts the built server on the userDir (SQLite, API open on loopback), runs `steps`, stops it. */
async function withServer(steps: (url: string) => Promise<void>): Promise<void> {
  const server = await startCli(['--user-dir', dir.userDir, '--port', '0'])
  await steps(server.url)
  expect(await server.stop()).toBe(0)
}

const sets = async (url: string): Promise<NodeSet[]> =>
  (await fetch(`${url}/nodes`)).json() as Promise<NodeSet[]>
const states = async (url: string) =>
  (await sets(url)).map(
    (set) =>
      `${set.id} ${set.enabled ? 'enabled' : 'disabled'} ${set.loaded ? 'loaded' : `not loaded${set.err ? ` (${set.err})` : ''}`}`,
  )
const put = (url: string, module: string, enabled: boolean) =>
  fetch(`${url}/nodes/${module}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ enabled }),
  })

describe('stored module state across starts without the modules on disk', () => {
  it('keeps a disabled module disabled through a start with node_modules renamed away', async () => {
    await withServer(async (url) => {
      expect((await put(url, SHOUT.name, false)).status).toBe(200)
    })
    const modules = path.join(dir.userDir, 'node_modules')
    await rename(modules, path.join(dir.userDir, 'node_modules.away'))
    await withServer(async (url) => {
      expect(await states(url)).toEqual([
        `${TOOLS.name}/lower enabled not loaded (not installed)`,
        `${TOOLS.name}/upper enabled not loaded (not installed)`,
        `${SHOUT.name}/shout disabled not loaded (not installed)`,
      ])
    })
    await rename(path.join(dir.userDir, 'node_modules.away'), modules)
    await withServer(async (url) => {
      expect(await states(url)).toEqual([
        `${TOOLS.name}/lower enabled loaded`,
        `${TOOLS.name}/upper enabled loaded`,
        `${SHOUT.name}/shout disabled not loaded`,
      ])
      // Enabling it now loads it.
      expect((await put(url, SHOUT.name, true)).status).toBe(200)
      expect(await states(url)).toContain(`${SHOUT.name}/shout enabled loaded`)
    })
  })

  it('keeps the state of one module whose folder is gone; `modules forget` drops it', async () => {
    await withServer(async (url) => {
      expect((await put(url, SHOUT.name, false)).status).toBe(200)
    })
    await rm(path.join(dir.userDir, 'node_modules', SHOUT.name), { recursive: true })
    await withServer(async (url) => {
      expect(await states(url)).toContain(`${SHOUT.name}/shout disabled not loaded (not installed)`)
    })

    const forget = runCli(['modules', 'forget', SHOUT.name, '--user-dir', dir.userDir])
    expect(await forget.exited).toBe(0)
    expect(forget.stdout).toBe(
      `forgot the stored state of ${SHOUT.name}: if it is installed, its node sets start enabled at the next start\n`,
    )
    const again = runCli(['modules', 'forget', SHOUT.name, '--user-dir', dir.userDir])
    expect(await again.exited).toBe(0)
    expect(again.stdout).toBe(`no stored state for ${SHOUT.name}\n`)
    await withServer(async (url) => {
      expect((await sets(url)).map((set) => set.id)).toEqual([`${TOOLS.name}/lower`, `${TOOLS.name}/upper`])
      expect((await fetch(`${url}/nodes/${SHOUT.name}`)).status).toBe(404)
    })
  })

  it('`modules forget` without a name, or with memory storage, is a usage error', async () => {
    const bare = runCli(['modules', 'forget', '--user-dir', dir.userDir])
    expect(await bare.exited).toBe(2)
    expect(bare.stderr).toBe(
      'flowadmin: modules forget takes exactly one module name\nflowadmin: Run "flowadmin modules --help" for usage.\n',
    )
    const memory = path.join(dir.userDir, 'memory.json')
    await writeFile(memory, JSON.stringify({ storage: 'memory' }))
    const refused = runCli(['modules', 'forget', SHOUT.name, '--settings', memory])
    expect(await refused.exited).toBe(2)
    expect(refused.stderr).toMatch(/storage is "memory"/)
  })
})

describe('concurrent toggles of one module over a real socket', () => {
  it('50 alternating PUTs at once: each answer is what it asked for, events alternate, the last applied state persists', async () => {
    const audit = path.join(dir.userDir, 'audit.log')
    const settings = path.join(dir.userDir, 'settings.json')
    const first = await startBuiltServer(settings, { settings: { auditLog: { file: audit } } })
    expect((await put(first.url, SHOUT.name, false)).status).toBe(200)

    const wanted = Array.from({ length: 50 }, (_, i) => i % 2 === 0)
    const answers = await Promise.all(
      wanted.map(async (enabled) => {
        const response = await put(first.url, SHOUT.name, enabled)
        return { status: response.status, body: (await response.json()) as { nodes: NodeSet[] } }
      }),
    )
    expect(answers.map((answer) => answer.status)).toEqual(wanted.map(() => 200))
    expect(answers.map((answer) => answer.body.nodes.map((set) => set.enabled))).toEqual(
      wanted.map((enabled) => [enabled]),
    )
    const now = await sets(first.url)
    expect(await first.stop()).toBe(0)

    // One event per real change: never the same change twice in a row.
    const events = (await readFile(audit, 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { event: string; module?: string })
      .filter((event) => event.module === SHOUT.name)
      .map((event) => event.event)
    expect(events[0]).toBe('module.disabled')
    events.forEach((event, i) => {
      if (i > 0) expect(event).not.toBe(events[i - 1])
    })
    const last = events.at(-1) === 'module.enabled'
    const shout = now.find((set) => set.id === `${SHOUT.name}/shout`)
    expect(shout).toMatchObject({ enabled: last, loaded: true })

    const second = await startBuiltServer(settings)
    expect((await sets(second.url)).find((set) => set.id === `${SHOUT.name}/shout`)?.enabled).toBe(last)
  })
})
