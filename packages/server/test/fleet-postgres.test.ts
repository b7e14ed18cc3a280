// Fleet mode on two built flowadmin instances sharing one PostgreSQL database: a real Node-RED
// connected to one of them applies a change made at the other, and both list it.
import * as path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { useTestDatabase } from '../../adapter-postgres/test/pg-server.js'
import { startBuiltServer, useServerFolder } from './cli-process.js'
import { SHOUT } from './ecosystem.js'
import {
  eventually,
  fleetAdminAuth,
  helperSettings,
  instanceToken,
  ownState,
  PASSWORD,
  SECRET,
  writeFleetModules,
} from './fleet-setup.js'
import { type NodeRedRun, startNodeRed, stopNodeReds } from './node-red-process.js'
import { logIn } from './password-grant.js'

const database = useTestDatabase()
const work = useServerFolder('fleet-pg')
const urls: string[] = []
let nodeRed: NodeRedRun

beforeAll(async () => {
  const settings = {
    storage: 'postgres',
    postgres: { url: database.current().url, pool: 4 },
    auditLog: 'off',
    fleet: { modules: true },
    adminAuth: await fleetAdminAuth(),
  }
  for (const name of ['flowadmin-a', 'flowadmin-b']) {
    const dir = path.join(work.dir, name)
    const server = await startBuiltServer(path.join(dir, 'settings.json'), {
      settings: { ...settings, userDir: dir },
    })
    urls.push(server.url)
  }
  const userDir = path.join(work.dir, 'edge')
  await writeFleetModules(userDir)
  // The instance is connected to flowadmin B only.
  nodeRed = await startNodeRed(userDir, helperSettings(urls[1] as string, 'edge'), {
    FLOWADMIN_SECRET: SECRET,
  })
}, 180_000)

afterAll(stopNodeReds)

async function adminToken(url: string): Promise<string> {
  for (let attempt = 0; ; attempt++) {
    const res = await logIn(url, PASSWORD)
    if (res.status === 200 || attempt === 10) {
      expect(res.status).toBe(200)
      return ((await res.json()) as { access_token: string }).access_token
    }
    await new Promise((resolve) => setTimeout(resolve, 1000))
  }
}

describe('fleet mode on two flowadmin instances sharing PostgreSQL', () => {
  it('a change made at one reaches the Node-RED connected to the other, and both list it', async () => {
    const [urlA, urlB] = urls as [string, string]
    const tokenA = await adminToken(urlA)
    const listAt = async (url: string, token: string) =>
      (await (
        await fetch(`${url}/fleet/instances`, { headers: { authorization: `Bearer ${token}` } })
      ).json()) as Array<{
        id: string
        lastReport: string | null
      }>
    const listed = await eventually(
      () => listAt(urlA, tokenA),
      (list) => list.some((instance) => instance.id === 'edge' && instance.lastReport !== null),
    )
    expect(listed.map((instance) => instance.id)).toEqual(['edge'])
    const own = await instanceToken(nodeRed)
    expect(await ownState(nodeRed, own, SHOUT.name)).toBe('shout=true')

    const off = await fetch(`${urlA}/nodes/${SHOUT.name}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${tokenA}`, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: false }),
    })
    expect(off.status).toBe(200)
    expect(
      await eventually(
        () => ownState(nodeRed, own, SHOUT.name),
        (s) => s === 'shout=false',
      ),
    ).toBe('shout=false')
    // B answers with the desired state A wrote, and the instance's own state beside it.
    const tokenB = await adminToken(urlB)
    const atB = (await (
      await fetch(`${urlB}/nodes/${SHOUT.name}`, { headers: { authorization: `Bearer ${tokenB}` } })
    ).json()) as { nodes: Array<{ enabled: boolean }>; instances: Array<{ id: string; enabled: object }> }
    expect(atB.nodes.map((set) => set.enabled)).toEqual([false])
    const settled = await eventually(
      async () =>
        (await (
          await fetch(`${urlB}/nodes/${SHOUT.name}`, { headers: { authorization: `Bearer ${tokenB}` } })
        ).json()) as { instances: Array<{ id: string; enabled: object; drift?: unknown }> },
      (view) => view.instances[0]?.drift === undefined,
    )
    expect(settled.instances).toEqual([
      { id: 'edge', connected: true, version: SHOUT.version, enabled: { shout: false } },
    ])
  }, 300_000)
})
