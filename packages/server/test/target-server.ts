// A userDir for tests that attack the built server: authentication on, SQLite storage, the
// demo's plain and scoped node modules and its flows.json (which uses the `greeting` type).
import { mkdtemp } from 'node:fs/promises'
import * as path from 'node:path'
import * as argon2 from 'argon2'
import {
  type BuiltServer,
  copyDemo,
  startBuiltServer,
  useServerFolder,
  writeSettings,
} from './cli-process.js'

export const ADMIN = { username: 'admin', password: 'admin-pw' }
export const VIEWER = { username: 'viewer', password: 'viewer-pw' }

export const GREETING = 'flowadmin-example-greeting'
export const TEXT_TOOLS = '@flowadmin-examples/text-tools'

/** Every module and its node sets; `inUse` sets hold a type the deployed flows use. */
export const MODULES: ReadonlyArray<{ name: string; sets: ReadonlyArray<{ name: string; inUse: boolean }> }> =
  [
    { name: GREETING, sets: [{ name: 'greeting', inUse: true }] },
    {
      name: TEXT_TOOLS,
      sets: [
        { name: 'upper', inUse: false },
        { name: 'lower', inUse: false },
      ],
    },
  ]

/** Every node set id, `module/set`. */
export const SET_IDS: readonly string[] = MODULES.flatMap((module) =>
  module.sets.map((set) => `${module.name}/${set.name}`),
)

export interface HostileUserDir {
  userDir: string
  settingsFile: string
  /** Starts the built server on a free port of 127.0.0.1; resolves once it listens. */
  start(): Promise<BuiltServer>
}

const hash = (password: string) =>
  argon2.hash(password, { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 })

/**
 * The hooks of a test file that attacks the built server (see {@link useServerFolder}). Returns
 * the function that makes a userDir in the file's folder (see {@link createHostileUserDir}).
 */
export function useHostileUserDir(): (extra?: Record<string, unknown>) => Promise<HostileUserDir> {
  const folder = useServerFolder('hostile')
  return (extra) => createHostileUserDir(folder.dir, extra)
}

/** A fresh userDir in `parent` with the settings above (plus `extra` settings; its `adminAuth` adds to theirs). */
async function createHostileUserDir(
  parent: string,
  extra: Record<string, unknown> = {},
): Promise<HostileUserDir> {
  const userDir = await mkdtemp(path.join(parent, 'user-'))
  const settingsFile = path.join(userDir, 'settings.json')
  await copyDemo(userDir, { flows: true })
  const { adminAuth, ...rest } = extra as { adminAuth?: Record<string, unknown> }
  const settings = {
    storage: 'sqlite',
    adminAuth: {
      type: 'credentials',
      users: [
        { username: ADMIN.username, password: await hash(ADMIN.password), permissions: '*' },
        { username: VIEWER.username, password: await hash(VIEWER.password), permissions: 'read' },
      ],
      ...adminAuth,
    },
    ...rest,
  }
  await writeSettings(settingsFile, settings)
  return {
    userDir,
    settingsFile,
    start: () => startBuiltServer(settingsFile),
  }
}

/**
 * Logs in with a form body from 127.0.0.1 and returns the access token; throws unless 200. A 503
 * (the login queue full, as it is when many logins arrive at once on a busy machine) is retried
 * after its Retry-After, as a well-behaved client does, a few times at most.
 */
export async function loginFor(
  url: string,
  user: { username: string; password: string },
  scope = '*',
): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    const response = await fetch(`${url}/auth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        client_id: 'service-admin',
        grant_type: 'password',
        scope,
        username: user.username,
        password: user.password,
      }),
    })
    const text = await response.text()
    if (response.status === 200) return (JSON.parse(text) as { access_token: string }).access_token
    const retryAfter = Number(response.headers.get('retry-after'))
    if (response.status !== 503 || attempt === 10 || !(retryAfter > 0))
      throw new Error(`login of ${user.username} answered ${response.status}: ${text}`)
    await new Promise((resolve) => setTimeout(resolve, retryAfter * 1000))
  }
}

/** `{setId: enabled}` of every node set, from GET /nodes with `token`. */
export async function enabledStates(url: string, token: string): Promise<Record<string, boolean>> {
  const response = await fetch(`${url}/nodes`, { headers: { authorization: `Bearer ${token}` } })
  if (response.status !== 200) throw new Error(`GET /nodes answered ${response.status}`)
  const sets = (await response.json()) as Array<{ id: string; enabled: boolean }>
  return Object.fromEntries(sets.map((set) => [set.id, set.enabled]))
}

/** The status of GET /settings with `token`: 200 while it is valid, 401 once it is not. */
export async function tokenStatus(url: string, token: string): Promise<number> {
  const response = await fetch(`${url}/settings`, { headers: { authorization: `Bearer ${token}` } })
  await response.arrayBuffer()
  return response.status
}
