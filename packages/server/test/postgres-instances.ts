// Built flowadmin instances on one PostgreSQL database, each with a userDir of its own holding
// the demo's node modules and flows, as two machines behind a load balancer would have.
import { mkdtemp, readFile } from 'node:fs/promises'
import * as path from 'node:path'
import * as argon2 from 'argon2'
import { afterEach } from 'vitest'
import { EMPTY_TABLES, useTestDatabase } from '../../adapter-postgres/test/pg-server.js'
import { copyDemo, killAll, useServerFolder, writeSettings } from './cli-process.js'
import { logIn } from './password-grant.js'

export const GREETING = 'flowadmin-example-greeting'
export const TEXT_TOOLS = '@flowadmin-examples/text-tools'
export const PASSWORD = 'admin-pw'

/** The test file's folder, which holds a userDir for each instance. */
let folder: { readonly dir: string } | undefined
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
  if (folder === undefined)
    throw new Error('prepareInstance needs useInstancesOnOneDatabase() in the test file')
  const userDir = await mkdtemp(path.join(folder.dir, 'instance-'))
  await copyDemo(userDir, { flows: true })
  const settingsFile = path.join(userDir, 'settings.json')
  await writeSettings(settingsFile, {
    storage: 'postgres',
    postgres,
    adminAuth: { type: 'credentials', users },
  })
  return settingsFile
}

/**
 * {@link prepareInstance}'s settings file with a second user, `leaver` (password leaver-pw, every
 * permission), whom a test removes in a reload; returns its path and contents.
 */
export async function prepareWithLeaver(postgres: Record<string, unknown>) {
  const file = await prepareInstance(postgres)
  const settings = JSON.parse(await readFile(file, 'utf8'))
  const leaver = {
    username: 'leaver',
    password: await argon2.hash('leaver-pw', { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2 }),
    permissions: '*',
  }
  settings.adminAuth.users.push(leaver)
  await writeSettings(file, settings)
  return { file, settings }
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
  folder = useServerFolder('pg-e2e')
  afterEach(async () => {
    await killAll()
    await database.current().query(EMPTY_TABLES)
  })
  return database
}
