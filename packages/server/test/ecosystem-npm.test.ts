// A node module installed with the real npm from a registry (one this test serves itself, so the
// suite needs no internet), as a user would before starting the server, administered by the built
// server.
import { execFile } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import * as path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startBuiltServer, useUserDir } from './cli-process.js'
import { ADMIN_PASSWORD, writeAuthSettings } from './ecosystem.js'
import { cleanNpmEnvironment, type LocalRegistry, startLocalRegistry } from './local-registry.js'
import { logIn } from './password-grant.js'

const MODULE = 'node-red-node-random'
const VERSION = '0.4.1'

const dir = useUserDir('npm')
let registry: LocalRegistry

beforeAll(async () => {
  registry = await startLocalRegistry()
  await registry.publish({ name: MODULE, version: VERSION, sets: { random: ['random'] } })
}, 60_000)
afterAll(() => registry.close())

/** Runs npm as from a shell, pointed at the local registry. */
function npm(args: string[], timeout: number): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      'npm',
      [...args, '--registry', registry.url],
      { cwd: dir.userDir, env: cleanNpmEnvironment(), timeout },
      (error, stdout, stderr) => {
        resolve({
          code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1,
          stdout,
          stderr,
        })
      },
    )
  })
}

type NodeSet = { id: string; name: string; types: string[]; enabled: boolean; loaded: boolean }

describe('a node module from an npm registry', () => {
  it(`installs ${MODULE}@${VERSION}, lists it, refuses to disable it while a flow uses it, disables and enables it`, {
    timeout: 180_000,
  }, async () => {
    const view = await npm(['view', `${MODULE}@${VERSION}`, 'version'], 30_000)
    expect(view.stdout.trim(), view.stderr).toBe(VERSION)

    const { userDir } = dir
    const install = await npm(
      ['install', '--prefix', userDir, `${MODULE}@${VERSION}`, '--no-audit', '--no-fund'],
      120_000,
    )
    expect(install.code, install.stderr).toBe(0)
    await writeFile(
      path.join(userDir, 'flows.json'),
      JSON.stringify([{ id: 'r1', type: 'random', wires: [] }]),
    )
    const settings = await writeAuthSettings(userDir, undefined, { storage: 'sqlite' })

    const first = await startBuiltServer(settings)
    const token = await login(first.url)
    const api = client(first.url, token)

    const sets = (await (await api('GET', '/nodes')).json()) as NodeSet[]
    const random = {
      id: `${MODULE}/random`,
      name: 'random',
      types: ['random'],
      enabled: true,
      loaded: true,
      module: MODULE,
      version: VERSION,
    }
    expect(sets).toEqual([random])
    expect(await (await api('GET', `/nodes/${MODULE}`)).json()).toEqual({
      name: MODULE,
      version: VERSION,
      nodes: [random],
    })

    const refused = await api('PUT', `/nodes/${MODULE}`, { enabled: false })
    expect(refused.status).toBe(400)
    expect(await refused.json()).toEqual({
      code: 'type_in_use',
      message: 'Type in use: random',
      types: ['random'],
    })

    await writeFile(path.join(userDir, 'flows.json'), '[]')
    const disabled = await api('PUT', `/nodes/${MODULE}`, { enabled: false })
    expect(disabled.status).toBe(200)
    expect(await disabled.json()).toEqual({
      name: MODULE,
      version: VERSION,
      nodes: [{ ...random, enabled: false }],
    })

    // Disabled at start, it is not loaded; enabling loads the module's real files.
    expect(await first.stop()).toBe(0)
    const second = await startBuiltServer(settings)
    const again = client(second.url, token)
    expect(await (await again('GET', `/nodes/${MODULE}/random`)).json()).toEqual({
      ...random,
      enabled: false,
      loaded: false,
    })
    const enabled = await again('PUT', `/nodes/${MODULE}`, { enabled: true })
    expect(enabled.status).toBe(200)
    expect(await enabled.json()).toEqual({ name: MODULE, version: VERSION, nodes: [random] })
  })
})

async function login(url: string): Promise<string> {
  const res = await logIn(url, ADMIN_PASSWORD)
  expect(res.status).toBe(200)
  return ((await res.json()) as { access_token: string }).access_token
}

function client(url: string, token: string) {
  return (method: string, path: string, body?: unknown) =>
    fetch(`${url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    })
}
