// Two instances on one userDir (two processes, or a restart beside a running one): an instance
// that starts removes only the npm staging folders nobody works in any more.
import { spawn } from 'node:child_process'
import { mkdir, mkdtemp, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { hostname, tmpdir } from 'node:os'
import * as path from 'node:path'
import { createSignal } from '@flowadmin/testkit'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type RunningServer, startServer } from '../src/index.js'
import { type LocalRegistry, startLocalRegistry } from './local-registry.js'
import { captureLog } from './log-capture.js'

const SHOUT = { name: 'node-red-contrib-shout', version: '1.2.0', sets: { shout: ['shout'] } }
const STAGING = '.flowadmin-staging-'

let registry: LocalRegistry
let userDir: string
const running: RunningServer[] = []

beforeAll(async () => {
  registry = await startLocalRegistry()
  await registry.publish(SHOUT)
}, 120_000)
afterAll(() => registry.close())
beforeEach(async () => {
  userDir = await mkdtemp(path.join(tmpdir(), 'flowadmin-staging-'))
})
afterEach(async () => {
  for (const server of running.splice(0)) await server.close()
  await rm(userDir, { recursive: true, force: true })
})

/**
 * A registry in front of the local one that holds every request until `release()`; `asked`
 * resolves with the first request, when npm is at work in its staging folder.
 */
async function startGatedRegistry(upstream: string) {
  const released = createSignal()
  const asked = createSignal()
  const server: Server = createServer(async (req, res) => {
    asked.give()
    await released.given
    const answer = await fetch(new URL((req.url ?? '/').slice(1), upstream), {
      headers: { accept: req.headers.accept ?? '*/*' },
    })
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'text/plain' })
    res.end(Buffer.from(await answer.arrayBuffer()))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    asked: asked.given,
    release: released.give,
    async close() {
      released.give()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

async function start(registryUrl: string): Promise<RunningServer> {
  const server = await startServer({
    port: 0,
    userDir,
    settings: { storage: 'memory', externalModules: { palette: { registry: registryUrl } } },
    stdout: () => {},
    logger: captureLog().logger,
  })
  running.push(server)
  return server
}

const stagingFolders = async () => (await readdir(userDir)).filter((entry) => entry.startsWith(STAGING))

/** The pid of a process that has ended. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' })
  await new Promise((resolve) => child.once('exit', resolve))
  return child.pid as number
}

describe('npm staging folders in a shared userDir', () => {
  it('an instance starting leaves the staging folder of another one mid-install, whose install then completes', async () => {
    const gate = await startGatedRegistry(registry.url)
    try {
      const first = await start(gate.url)
      const installing = fetch(`${first.url}/nodes`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ module: SHOUT.name, version: '1.2.0' }),
      })
      await gate.asked
      const inUse = await stagingFolders()
      expect(inUse).toHaveLength(1)

      await start(registry.url)
      expect(await stagingFolders()).toEqual(inUse)

      gate.release()
      const installed = await installing
      expect(installed.status).toBe(200)
      expect((await installed.json()).version).toBe('1.2.0')
      const manifest = path.join(userDir, 'node_modules', SHOUT.name, 'package.json')
      expect(JSON.parse(await readFile(manifest, 'utf8')).version).toBe('1.2.0')
      expect(await stagingFolders()).toEqual([])
    } finally {
      await gate.close()
    }
  }, 60_000)

  it('removes at start what a crash left: a folder of a process that has ended, and one nobody has touched for long', async () => {
    const ended = path.join(userDir, `${STAGING}${await deadPid()}-a1b2c3`)
    await mkdir(path.join(ended, 'node_modules'), { recursive: true })
    await writeFile(path.join(ended, '.owner'), JSON.stringify({ host: hostname(), pid: await deadPid() }))
    // Left by an older version, without an owner: only its age tells.
    const old = path.join(userDir, `${STAGING}x9y8z7`)
    await mkdir(old)
    const hourAgo = new Date(Date.now() - 3_600_000)
    await utimes(old, hourAgo, hourAgo)
    const fresh = path.join(userDir, `${STAGING}just-made`)
    await mkdir(fresh)

    await start(registry.url)
    expect(await stagingFolders()).toEqual([path.basename(fresh)])
  })
})
