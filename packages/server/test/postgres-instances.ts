// Built flowadmin instances on one PostgreSQL database, each with a userDir of its own holding
// the demo's node modules and flows, as two machines behind a load balancer would have.
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import * as argon2 from 'argon2'
import { afterAll, afterEach, beforeAll } from 'vitest'
import { EMPTY_TABLES, useTestDatabase } from '../../adapter-postgres/test/pg-server.js'
import { killAll, requireBuild, startCli } from './cli-process.js'
import { logIn } from './password-grant.js'

const DEMO = fileURLToPath(new URL('../../../examples/demo', import.meta.url))
export const GREETING = 'flowadmin-example-greeting'
export const TEXT_TOOLS = '@flowadmin-examples/text-tools'
export const PASSWORD = 'admin-pw'

const folders: string[] = []
let users: object[] | null = null

/** A userDir with the demo's modules and flows and a settings file for `postgres`; returns the settings path. */
export async function prepareInstance(postgres: Record<string, unknown>): Promise<string> {
  users ??= [
    {
      username: 'admin',
      password: await argon2.hash(PASSWORD, { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2 }),
      permissions: '*',
    },
  ]
  const userDir = await mkdtemp(path.join(tmpdir(), 'flowadmin-pg-e2e-'))
  folders.push(userDir)
  await cp(path.join(DEMO, 'node_modules'), path.join(userDir, 'node_modules'), { recursive: true })
  await cp(path.join(DEMO, 'flows.json'), path.join(userDir, 'flows.json'))
  const settingsFile = path.join(userDir, 'settings.json')
  await writeFile(
    settingsFile,
    JSON.stringify({ storage: 'postgres', postgres, adminAuth: { type: 'credentials', users } }),
  )
  return settingsFile
}

/** Starts a built instance on a free port. */
export function startInstance(settingsFile: string) {
  return startCli(['--settings', settingsFile, '--port', '0'])
}

export async function removeInstances(): Promise<void> {
  for (const folder of folders.splice(0)) await rm(folder, { recursive: true, force: true })
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

export const login = (url: string, password = PASSWORD): Promise<Response> => logIn(url, password)

export async function tokenFrom(url: string): Promise<string> {
  const response = await login(url)
  if (response.status !== 200) throw new Error(`login answered ${response.status}`)
  return ((await response.json()) as { access_token: string }).access_token
}

export function setEnabled(url: string, module: string, enabled: boolean, token: string): Promise<Response> {
  return fetch(`${url}/nodes/${module}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', ...bearer(token) },
    body: JSON.stringify({ enabled }),
  })
}

export type ModuleBody = { name: string; nodes: Array<{ id: string; enabled: boolean; loaded: boolean }> }

export async function moduleOn(url: string, module: string, token: string): Promise<ModuleBody> {
  const response = await fetch(`${url}/nodes/${module}`, { headers: bearer(token) })
  if (response.status !== 200) throw new Error(`GET /nodes/${module} answered ${response.status}`)
  return (await response.json()) as ModuleBody
}

export const flags = (module: ModuleBody) =>
  module.nodes.map((set) => `${set.id} enabled=${set.enabled} loaded=${set.loaded}`)

/**
 * A throw-away database for a test file of built instances: the build is required first, every
 * instance is killed and every table emptied after each test (throttles would carry over), and
 * the instances' folders are removed at the end.
 */
export function useInstancesOnOneDatabase(): ReturnType<typeof useTestDatabase> {
  const database = useTestDatabase()
  beforeAll(() => requireBuild())
  afterEach(async () => {
    await killAll()
    await database.current().query(EMPTY_TABLES)
  })
  afterAll(removeInstances)
  return database
}
