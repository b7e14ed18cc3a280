// What the three examples share: the admin settings from the environment, and the core and HTTP
// app over whatever store and password verifier the runtime has. Each runtime passes the client's
// address to the app as `env.address`.
import { createHttpApp } from '@flowadmin/adapter-http'
import { createCore } from '@flowadmin/core'
import manifest from './package.json' with { type: 'json' }

/**
 * The node sets of the host runtime. flowadmin's server finds them on disk; a host that embeds
 * the core lists its own, as these examples do.
 */
const NODE_MODULES = [
  {
    name: '@flowadmin-examples/text-tools',
    version: '1.0.0',
    sets: [
      { name: 'upper', types: ['upper-case'] },
      { name: 'lower', types: ['lower-case'] },
    ],
  },
  { name: 'flowadmin-example-greeting', version: '1.0.0', sets: [{ name: 'greeting', types: ['greeting'] }] },
]
/** The node types the host's deployed flows use: disabling their module is refused. */
const TYPES_IN_USE = new Set(['greeting'])

/** How often expired tokens and throttle counters are swept, in milliseconds. */
export const SWEEP_INTERVAL_MS = 60_000

/**
 * `adminAuth` of flowadmin's settings (the same shape as in the server's settings file), from the
 * JSON text of FLOWADMIN_ADMIN_AUTH. Throws an Error whose message says what is wrong.
 */
export function readAdminAuth(text) {
  if (text === undefined || text === '') {
    throw new Error(
      'FLOWADMIN_ADMIN_AUTH is not set: give it the adminAuth settings as JSON, e.g. {"users":[{"username":"admin","password":"<flowadmin hash-pw>","permissions":"*"}]}',
    )
  }
  let adminAuth
  try {
    adminAuth = JSON.parse(text)
  } catch (error) {
    throw new Error(`FLOWADMIN_ADMIN_AUTH is not JSON: ${error.message}`)
  }
  const users = adminAuth?.users
  if (!Array.isArray(users) || users.length === 0) {
    throw new Error('FLOWADMIN_ADMIN_AUTH needs "users": a non-empty array')
  }
  for (const [i, user] of users.entries()) {
    if (typeof user?.username !== 'string' || user.username === '') {
      throw new Error(`FLOWADMIN_ADMIN_AUTH: users[${i}].username must be a non-empty string`)
    }
    if (typeof user.password !== 'string' || !user.password.startsWith('$argon2')) {
      throw new Error(
        `FLOWADMIN_ADMIN_AUTH: users[${i}].password must be an argon2 hash from flowadmin hash-pw`,
      )
    }
    const permissions = Array.isArray(user.permissions) ? user.permissions : [user.permissions]
    if (!permissions.every((permission) => typeof permission === 'string')) {
      throw new Error(`FLOWADMIN_ADMIN_AUTH: users[${i}].permissions must be a string or an array of strings`)
    }
  }
  return adminAuth
}

/**
 * The admin API over `stores` and `verifier`, as a Hono app whose `fetch(request, { address })`
 * a runtime serves; `core.sweep()` removes what expired.
 */
export async function createAdmin({ stores, verifier, adminAuth }) {
  const core = createCore(
    {
      stores,
      verifier,
      loader: { load: async () => ({ ok: true }) },
      typeUsage: { typesInUse: async () => TYPES_IN_USE },
      events: { emit: (event) => console.log(JSON.stringify(event)) },
    },
    // WebAssembly verifies on this one thread: more than one verification "at once" would only
    // take turns, so the core's login queue runs one and lets the others wait in its lanes.
    { adminAuth: { ...adminAuth, loginQueue: { concurrency: 1, ...adminAuth.loginQueue } } },
  )
  await core.modules.sync(NODE_MODULES)
  const app = createHttpApp(core, {
    version: manifest.version,
    clientAddress: (c) => c.env?.address ?? 'unknown',
  })
  return { app, core }
}
