// The real node-red-admin client (the pinned devDependency) against the built server: what its
// user types, what it prints, and what the server's state is afterwards.
import { existsSync } from 'node:fs'
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import * as path from 'node:path'
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest'
import { startBuiltServer, useUserDir } from './cli-process.js'
import {
  ADMIN_PASSWORD,
  killClients,
  lines,
  nodeRedAdmin,
  SHOUT,
  storedToken,
  TOOLS,
  writeAuthSettings,
  writeEcosystemUserDir,
} from './ecosystem.js'
import { startLocalRegistry } from './local-registry.js'

const WAVE = { name: 'node-red-contrib-wave', version: '1.0.0', sets: { wave: ['wave'] } }

/** Each test's folder: flowadmin's userDir and node-red-admin's home in it. */
const work = useUserDir('nr-admin')
let userDir: string
let home: string

beforeEach(async () => {
  userDir = path.join(work.userDir, 'user')
  home = path.join(work.userDir, 'home')
  await mkdir(userDir)
  await mkdir(home)
  await writeEcosystemUserDir(userDir)
})
afterEach(killClients)
afterAll(killClients)

const admin = (...args: string[]) => nodeRedAdmin(home, args)
const ok = (stdout: string[]) => ({ code: 0, stdout: [...stdout, ''], stderr: [''] })
/** What `info <module>` prints: the module's name and version, then the table of its node sets. */
const moduleInfo = (module: { name: string; version: string }, table: string[]) =>
  ok([`Module:    ${module.name}`, `Version:   ${module.version}`, '', ...table])
const failed = (stderr: string) => ({ code: 1, stdout: [''], stderr: [stderr, ''] })
/** A run with its output split into lines, trailing padding removed. */
const printed = async (run: ReturnType<typeof nodeRedAdmin>) => {
  const { code, stdout, stderr } = await run
  return { code, stdout: lines(stdout), stderr: lines(stderr) }
}

type NodeSet = { id: string; enabled: boolean; loaded: boolean; version: string }

describe('node-red-admin against flowadmin', () => {
  it('target, login, list, info, disable and enable, as the client prints them, with the server state after each', async () => {
    const settings = await writeAuthSettings(userDir, ['node-red-admin'])
    const { url } = await startBuiltServer(settings)

    expect(await printed(admin('target', url))).toEqual(ok([`Target: ${url}`]))
    expect(await printed(admin('list'))).toEqual(failed("Not logged in. Use 'login' to log in."))

    // A wrong password: the client says so and keeps no token.
    expect(await printed(nodeRedAdmin(home, ['login'], ['admin', 'wrong password']))).toEqual({
      code: 1,
      stdout: ['Username: Password:'],
      stderr: ['Error: Login failed', ''],
    })
    expect(await storedToken(home)).toBeNull()

    expect(await printed(nodeRedAdmin(home, ['login'], ['admin', ADMIN_PASSWORD]))).toEqual(
      ok(['Username: Password: Logged in']),
    )
    const token = await storedToken(home)
    expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const auth = { authorization: `Bearer ${token}` }
    const settingsSeen = await fetch(`${url}/settings`, { headers: auth })
    expect(await settingsSeen.json()).toMatchObject({ user: { username: 'admin', permissions: ['*'] } })
    /** The server's state of one module: `set enabled loaded` for each node set. */
    const state = async (module: string) => {
      const res = await fetch(`${url}/nodes/${module}`, { headers: auth })
      expect(res.status).toBe(200)
      const body = (await res.json()) as { nodes: NodeSet[] }
      return body.nodes.map((set) => `${set.id} ${set.enabled ? 'enabled' : 'disabled'} ${set.loaded}`)
    }

    expect(await printed(admin('list'))).toEqual(
      ok([
        'Nodes                          Types        State',
        '@acme/node-red-tools/lower     lower-case   enabled',
        '                               lower-all',
        '@acme/node-red-tools/upper     upper-case   enabled',
        'node-red-contrib-shout/shout   shout        enabled',
      ]),
    )

    expect(await printed(admin('info', SHOUT.name))).toEqual(
      moduleInfo(SHOUT, [
        'Nodes                          Types   State',
        'node-red-contrib-shout/shout   shout   enabled',
      ]),
    )

    // A plain module: disable, then enable.
    expect(await printed(admin('disable', SHOUT.name))).toEqual(
      ok(['Nodes                          Types   State', 'node-red-contrib-shout/shout   shout   disabled']),
    )
    expect(await state(SHOUT.name)).toEqual([`${SHOUT.name}/shout disabled true`])
    expect(await printed(admin('enable', SHOUT.name))).toEqual(
      ok(['Nodes                          Types   State', 'node-red-contrib-shout/shout   shout   enabled']),
    )
    expect(await state(SHOUT.name)).toEqual([`${SHOUT.name}/shout enabled true`])

    // A scoped module whose `lower-case` the deployed flows use: refused, nothing changes.
    expect(await printed(admin('disable', TOOLS.name))).toEqual(failed('400: Type in use: lower-case'))
    expect(await printed(admin('disable', `${TOOLS.name}/lower`))).toEqual(
      failed('400: Type in use: lower-case'),
    )
    expect(await state(TOOLS.name)).toEqual([
      `${TOOLS.name}/upper enabled true`,
      `${TOOLS.name}/lower enabled true`,
    ])

    // One node set of it can go, and `info` shows that set with its module's version.
    expect(await printed(admin('disable', `${TOOLS.name}/upper`))).toEqual(
      ok([
        'Nodes                        Types        State',
        '@acme/node-red-tools/upper   upper-case   disabled',
      ]),
    )
    expect(await printed(admin('info', `${TOOLS.name}/upper`))).toEqual(
      ok([
        `Name:      ${TOOLS.name}/upper`,
        `Module:    ${TOOLS.name}`,
        `Version:   ${TOOLS.version}`,
        'Types:     upper-case',
        'State:     disabled',
      ]),
    )
    expect(await state(TOOLS.name)).toEqual([
      `${TOOLS.name}/upper disabled true`,
      `${TOOLS.name}/lower enabled true`,
    ])
    expect(await printed(admin('enable', TOOLS.name))).toEqual(
      ok([
        'Nodes                        Types        State',
        '@acme/node-red-tools/lower   lower-case   enabled',
        '                             lower-all',
        '@acme/node-red-tools/upper   upper-case   enabled',
      ]),
    )

    // Once no flow uses it, the whole scoped module can be disabled.
    await writeFile(path.join(userDir, 'flows.json'), '[]')
    expect(await printed(admin('disable', TOOLS.name))).toEqual(
      ok([
        'Nodes                        Types        State',
        '@acme/node-red-tools/lower   lower-case   disabled',
        '                             lower-all',
        '@acme/node-red-tools/upper   upper-case   disabled',
      ]),
    )
    expect(await state(TOOLS.name)).toEqual([
      `${TOOLS.name}/upper disabled true`,
      `${TOOLS.name}/lower disabled true`,
    ])

    // An unknown module is a 404 with an empty body (the spec's); the client prints its own words.
    const notFound = 'Request failed with status code 404'
    expect(await printed(admin('disable', 'no-such-module'))).toEqual(failed(`404: AxiosError: ${notFound}`))
    expect(await printed(admin('info', '@acme/nothing'))).toEqual(failed(`404: AxiosError: ${notFound}`))

    // --json prints the server's own objects.
    const listed = await admin('list', '--json')
    expect(listed.code).toBe(0)
    const fromServer = await (await fetch(`${url}/nodes`, { headers: auth })).json()
    expect(JSON.parse(listed.stdout)).toEqual(fromServer)
  })

  it('install and remove a module from a registry, as the client prints them, with userDir after each', async () => {
    const registry = await startLocalRegistry()
    try {
      await registry.publish(WAVE)
      const settings = await writeAuthSettings(userDir, ['node-red-admin'], {
        externalModules: { palette: { registry: registry.url, denyList: ['node-red-contrib-evil*'] } },
      })
      const { url } = await startBuiltServer(settings)
      await admin('target', url)
      await nodeRedAdmin(home, ['login'], ['admin', ADMIN_PASSWORD])

      // install prints what info prints.
      const waveInfo = moduleInfo(WAVE, [
        'Nodes                        Types   State',
        'node-red-contrib-wave/wave   wave    enabled',
      ])
      expect(await printed(admin('install', `${WAVE.name}@^1`))).toEqual(waveInfo)
      const manifest = JSON.parse(await readFile(path.join(userDir, 'package.json'), 'utf8'))
      expect(manifest.dependencies).toEqual({ [WAVE.name]: '^1.0.0' })
      expect(await printed(admin('info', WAVE.name))).toEqual(waveInfo)

      // Refused by the settings: the client prints the server's message; nothing was fetched.
      const asked = registry.requests.length
      expect(await printed(admin('install', 'node-red-contrib-evil-twin'))).toEqual(
        failed('400: node-red-contrib-evil-twin is in the denyList'),
      )
      expect(await printed(admin('install', '../../etc'))).toEqual(
        failed('400: Invalid module name: ../../etc'),
      )
      expect(registry.requests.slice(asked)).toEqual([])
      // In use by the deployed flows: not removed.
      expect(await printed(admin('remove', TOOLS.name))).toEqual(failed('400: Type in use: lower-case'))

      expect(await printed(admin('remove', WAVE.name))).toEqual(ok([`Uninstalled ${WAVE.name}`]))
      expect(
        JSON.parse(await readFile(path.join(userDir, 'package.json'), 'utf8')).dependencies ?? {},
      ).toEqual({})
      expect(existsSync(path.join(userDir, 'node_modules', WAVE.name))).toBe(false)
      const notFound = 'Request failed with status code 404'
      expect(await printed(admin('info', WAVE.name))).toEqual(failed(`404: AxiosError: ${notFound}`))
      // The modules copied in by hand are still there.
      expect(existsSync(path.join(userDir, 'node_modules', SHOUT.name, 'package.json'))).toBe(true)
    } finally {
      await registry.close()
    }
  }, 60_000)

  it('logs in only when adminAuth.clients lists node-red-admin', async () => {
    const settings = await writeAuthSettings(userDir, undefined)
    const { url } = await startBuiltServer(settings)
    await admin('target', url)
    expect(await printed(nodeRedAdmin(home, ['login'], ['admin', ADMIN_PASSWORD]))).toEqual({
      code: 1,
      stdout: ['Username: Password:'],
      stderr: ['Error: Login failed', ''],
    })
    expect(await storedToken(home)).toBeNull()
  })

  it('needs no login when adminAuth is not set', async () => {
    const { url } = await startBuiltServer(path.join(userDir, 'settings.json'), {
      settings: { storage: 'memory', auditLog: 'off' },
    })
    await admin('target', url)
    expect(await printed(admin('login'))).toEqual(ok([]))
    expect(await printed(admin('disable', SHOUT.name))).toEqual(
      ok(['Nodes                          Types   State', 'node-red-contrib-shout/shout   shout   disabled']),
    )
  })
})
