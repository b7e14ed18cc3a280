// Fleet mode end to end: what an instance installs is the tarball flowadmin vetted. The built
// flowadmin installs a module from a local registry; the instance that is there installs that
// tarball (one whose Node-RED turns uploads off reports that). Then the registry serves another
// tarball under the same name and version: an instance that joins refuses it, installs nothing,
// and flowadmin shows why.
import { mkdir, stat, writeFile } from 'node:fs/promises'
import * as path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BuiltServer, startBuiltServer, useServerFolder } from './cli-process.js'
import {
  eventually,
  fleetAdminAuth,
  helperSettings,
  instanceToken,
  ownState,
  PASSWORD,
  SECRET,
} from './fleet-setup.js'
import { type LocalRegistry, startLocalRegistry } from './local-registry.js'
import { type NodeRedRun, startNodeRed, stopNodeReds } from './node-red-process.js'

const WAVE = { name: 'node-red-contrib-wave', version: '1.0.0', sets: { wave: ['wave'] } }

const work = useServerFolder('fleet-vetted')
let registry: LocalRegistry
let flowadmin: BuiltServer
let adminToken: string

/** An instance; `more` settings (Node-RED's palette options, say). */
async function startInstance(name: string, more?: string): Promise<NodeRedRun> {
  const userDir = path.join(work.dir, name)
  await mkdir(userDir, { recursive: true })
  await writeFile(
    path.join(userDir, 'flows.json'),
    JSON.stringify([{ id: 'tab1', type: 'tab', label: 'Flow 1' }]),
  )
  const settings = { ...helperSettings(flowadmin.url, name), ...(more !== undefined && { more }) }
  return startNodeRed(userDir, settings, {
    FLOWADMIN_SECRET: SECRET,
    npm_config_registry: registry.url,
  })
}

/** An instance's own view of WAVE: `wave=true` once installed and enabled, else the status. */
const waveOn = async (run: NodeRedRun) => ownState(run, await instanceToken(run), WAVE.name)

interface Instance {
  id: string
  connected: boolean
  applied: string | null
  drift: Array<{ module: string; reason: string; message?: string }>
}
const fleetInstances = async () => {
  const res = await fetch(`${flowadmin.url}/fleet/instances`, {
    headers: { authorization: `Bearer ${adminToken}` },
  })
  return (await res.json()) as Instance[]
}

beforeAll(async () => {
  registry = await startLocalRegistry()
  await registry.publish(WAVE)
  const flowadminDir = path.join(work.dir, 'flowadmin')
  const settings = {
    storage: 'sqlite',
    userDir: flowadminDir,
    fleet: { modules: true },
    externalModules: { palette: { registry: registry.url } },
    adminAuth: { ...(await fleetAdminAuth()), clients: ['node-red-admin'] },
  }
  flowadmin = await startBuiltServer(path.join(flowadminDir, 'settings.json'), { settings })
  const login = await fetch(`${flowadmin.url}/auth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      client_id: 'node-red-admin',
      grant_type: 'password',
      scope: '*',
      username: 'admin',
      password: PASSWORD,
    }),
  })
  expect(login.status).toBe(200)
  adminToken = ((await login.json()) as { access_token: string }).access_token
}, 180_000)

afterAll(async () => {
  await stopNodeReds()
  await registry?.close()
})

describe('the instances install the tarball flowadmin vetted', () => {
  it('installs it on the instance there (one whose Node-RED takes no uploads says so); an instance joining once the registry serves another tarball refuses it, and flowadmin shows why', async () => {
    // edge-c's Node-RED takes no uploads.
    const [edgeA, edgeC] = await Promise.all([
      startInstance('edge-a'),
      startInstance('edge-c', 'externalModules: { palette: { allowUpload: false } },'),
    ])
    await eventually(fleetInstances, (list) => list.filter((i) => i.connected).length === 2)
    const installed = await fetch(`${flowadmin.url}/nodes`, {
      method: 'POST',
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ module: WAVE.name }),
    })
    expect(installed.status).toBe(200)
    expect(
      await eventually(
        () => waveOn(edgeA),
        (state) => state === 'wave=true',
      ),
    ).toBe('wave=true')
    const noUploads = await eventually(fleetInstances, (list) =>
      list.some((i) => i.id === 'edge-c' && i.drift.some((d) => d.reason === 'install_failed')),
    )
    expect(noUploads.find((i) => i.id === 'edge-c')?.drift).toEqual([
      {
        module: WAVE.name,
        reason: 'install_failed',
        message: expect.stringContaining('Node-RED refused the upload of the tarball flowadmin vetted'),
      },
    ])
    expect(await waveOn(edgeC)).toBe('404')
    // Installed from the tarball the agent checked and uploaded: Node-RED keeps it in its userDir.
    const uploaded = path.join(work.dir, 'edge-a', 'nodes', `${WAVE.name}-${WAVE.version}.tgz`)
    expect((await stat(uploaded)).isFile()).toBe(true)

    // The registry now serves other bytes under the same name and version (its metadata agrees).
    await registry.publish({ ...WAVE, fields: { description: 'not the tarball flowadmin vetted' } })
    const edgeB = await startInstance('edge-b')
    const refused = await eventually(fleetInstances, (list) =>
      list.some(
        (i) =>
          i.id === 'edge-b' && i.drift.some((d) => d.module === WAVE.name && d.reason === 'install_failed'),
      ),
    )
    const drift = refused.find((i) => i.id === 'edge-b')?.drift.find((d) => d.module === WAVE.name)
    expect(drift).toEqual({
      module: WAVE.name,
      reason: 'install_failed',
      message: expect.stringMatching(
        /^integrity mismatch: the registry served another tarball than flowadmin vetted/,
      ),
    })
    expect(await waveOn(edgeB)).toBe('404')
    expect(edgeB.stderr.split('\n').filter((line) => line.includes('integrity mismatch'))).toHaveLength(1)
    // The instance that had it keeps it, untouched.
    expect(await waveOn(edgeA)).toBe('wave=true')
    expect(refused.find((i) => i.id === 'edge-a')?.drift).toEqual([])
  }, 300_000)
})
