import { createMemoryStores } from '@flowadmin/adapter-memory'
import type {
  AccessOptions,
  AdminAuthOptions,
  FleetOptions,
  LocalSignInMethod,
  ModuleDescriptor,
  Stores,
  UserOptions,
} from '@flowadmin/core'
import { createCoreWithDoubles } from '@flowadmin/testkit'
import { expect } from 'vitest'
import { createHttpApp, type HttpAppOptions } from '../src/index.js'

export const VERSION = '9.9.9'
export const ADDRESS = '203.0.113.7'

/** A plain module with one node set. */
export const PLAIN: ModuleDescriptor = {
  name: 'node-red-node-random',
  version: '0.4.1',
  sets: [{ name: 'random', types: ['random'] }],
}

/** A scoped module with several node sets. */
export const SCOPED: ModuleDescriptor = {
  name: '@acme/flow-kit',
  version: '2.1.0',
  sets: [
    { name: 'alpha', types: ['alpha-in', 'alpha-out'] },
    { name: 'beta', types: ['beta'] },
    { name: 'gamma', types: ['gamma'] },
  ],
}

export interface WorldOptions {
  /** false: no adminAuth, the API is open. */
  auth?: boolean
  defaultPermissions?: string | string[]
  sessionExpiryTime?: number
  typesInUse?: string[]
  loaderFailures?: Record<string, string>
  stores?: Stores
  app?: Partial<HttpAppOptions>
  loginQueue?: AdminAuthOptions['loginQueue']
  /** Resource servers besides `fleet`: id and secret. */
  resourceServers?: Array<{ id: string; secret: string }>
  /** Fleet mode's options; absent: off. */
  fleet?: FleetOptions
  /** Where `fleet` may have a person's authorization code sent (`GET /auth/authorize`); none by default. */
  fleetRedirectUris?: string[]
  /** Who must have a second factor (`adminAuth.secondFactor.require`); nobody by default. */
  secondFactor?: AdminAuthOptions['secondFactor']
  /** false: passkeys not configured (no relying party). */
  passkeys?: boolean
  /** Roles and groups of instances; absent: the built-in roles alone. */
  access?: AccessOptions
  /** Users besides admin, reader and editor (password `pw`), with their permissions and grants. */
  users?: Array<Omit<UserOptions, 'password'>>
}

/**
 * A core over memory stores and the test doubles, with PLAIN and SCOPED installed, and the app
 * over it. Users (password `pw` each): admin `*`, reader `read`, editor `nodes.read nodes.write`.
 */
/** The secret of the resource server `fleet` that every world configures. */
export const FLEET_SECRET = 'fleet-secret'

/** An HTTP Basic header of these credentials, each form-urlencoded first (RFC 6749 §2.3.1). */
export const basicHeader = (id: string, secret: string) =>
  `Basic ${btoa(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`)}`

export const fleetBasic = () => basicHeader('fleet', FLEET_SECRET)

export async function createWorld(options: WorldOptions = {}) {
  const doubles = createCoreWithDoubles({
    stores: options.stores ?? createMemoryStores(),
    adminAuth: (hasher) =>
      options.auth === false
        ? null
        : {
            users: [
              { username: 'admin', password: hasher.hash('pw'), permissions: '*' },
              { username: 'reader', password: hasher.hash('pw'), permissions: 'read' },
              { username: 'editor', password: hasher.hash('pw'), permissions: ['nodes.read', 'nodes.write'] },
              ...(options.users ?? []).map((user) => ({ ...user, password: hasher.hash('pw') })),
            ],
            default: options.defaultPermissions ? { permissions: options.defaultPermissions } : undefined,
            sessionExpiryTime: options.sessionExpiryTime,
            loginQueue: options.loginQueue,
            secondFactor: options.secondFactor,
            resourceServers: [
              {
                id: 'fleet',
                secret: hasher.hash(FLEET_SECRET),
                redirectUris: options.fleetRedirectUris,
                fleet: true,
              },
              ...(options.resourceServers ?? []).map(({ id, secret }) => ({
                id,
                secret: hasher.hash(secret),
              })),
            ],
          },
    loaderFailures: options.loaderFailures,
    typesInUse: options.typesInUse,
    fleet: options.fleet,
    passkeys: options.passkeys,
    access: options.access,
  })
  const { core, clock, hasher, events, loader, typeUsage, stores, installer, totp, webauthn } = doubles
  await core.modules.sync([PLAIN, SCOPED])

  let address = ADDRESS
  const app = createHttpApp(core, { version: VERSION, clientAddress: () => address, ...options.app })
  const prefix = options.app?.basePath ?? ''

  const world = {
    app,
    core,
    clock,
    hasher,
    events,
    loader,
    typeUsage,
    stores,
    installer,
    totp,
    webauthn,
    /** Requests from now on come from this address. */
    setAddress(next: string) {
      address = next
    },
    request(path: string, init?: RequestInit) {
      return app.request(`${prefix}${path}`, init)
    },
    /** POST /auth/introspect as the resource server `fleet` (or with the `authorization` given). */
    introspect(token: string, authorization: string | null = fleetBasic()) {
      return world.request('/auth/introspect', {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          ...(authorization === null ? {} : { Authorization: authorization }),
        },
        body: new URLSearchParams({ token }).toString(),
      })
    },
    /** POST /auth/token with these fields, as a form (default) or JSON. */
    tokenRequest(fields: Record<string, unknown>, as: 'form' | 'json' = 'form') {
      return world.request('/auth/token', {
        method: 'POST',
        headers: {
          'Content-Type': as === 'json' ? 'application/json' : 'application/x-www-form-urlencoded',
        },
        body:
          as === 'json'
            ? JSON.stringify(fields)
            : new URLSearchParams(fields as Record<string, string>).toString(),
      })
    },
    /** Logs in and returns the access token; fails the test unless it is 200. */
    async login(username = 'admin', scope = '*', clientId = 'service-admin'): Promise<string> {
      const res = await world.tokenRequest({
        client_id: clientId,
        grant_type: 'password',
        scope,
        username,
        password: 'pw',
      })
      expect(res.status).toBe(200)
      return ((await res.json()) as { access_token: string }).access_token
    },
    /**
     * A session of `username` as the sign-in page issues one once the person proved `method`
     * (by default a password and a code of their authenticator app): its token.
     */
    async signedInWith(username: string, method: LocalSignInMethod = 'password_totp'): Promise<string> {
      const owner = { username, permissions: [], fingerprint: '', method }
      const browser = `browser-of-${username}`
      const code = await core.signIn.handOver(owner, { binding: browser, authorization: null }, address)
      if (!code.ok || core.signIn.exchange === null) throw new Error('no code handed over')
      const issued = await core.signIn.exchange(browser, code.value, 'service-editor', address, null)
      if (!issued.ok) throw new Error(issued.error.message)
      return issued.value.accessToken
    },
    /**
     * Logs in through the resource server `fleet` (its editor's login form: HTTP Basic, the
     * password grant) and returns the token, which is for `fleet` alone.
     */
    async loginAsFleet(username = 'admin', scope = '*'): Promise<string> {
      const res = await world.request('/auth/token', {
        method: 'POST',
        headers: { Authorization: fleetBasic(), 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'password', scope, username, password: 'pw' }).toString(),
      })
      expect(res.status).toBe(200)
      return ((await res.json()) as { access_token: string }).access_token
    },
    get(path: string, token?: string) {
      return world.request(path, { headers: token ? { Authorization: `Bearer ${token}` } : {} })
    },
    /** A request with a body: JSON unless `contentType` says otherwise (a string is sent as is). */
    send(method: string, path: string, body: unknown, token?: string, contentType = 'application/json') {
      return world.request(path, {
        method,
        headers: {
          'Content-Type': contentType,
          ...(token ? { Authorization: `Bearer ${token}` } : {}),
        },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      })
    },
    put(path: string, body: unknown, token?: string, contentType?: string) {
      return world.send('PUT', path, body, token, contentType)
    },
    post(path: string, body: unknown, token?: string, contentType?: string) {
      return world.send('POST', path, body, token, contentType)
    },
    delete(path: string, token?: string) {
      return world.request(path, {
        method: 'DELETE',
        headers: token ? { Authorization: `Bearer ${token}` } : {},
      })
    },
    /** The module as a caller with every permission sees it (through the core). */
    async moduleState(name: string) {
      const module = await core.modules.get(name)
      if (!module.ok) throw new Error(`no module ${name}`)
      return module.value.nodes.map((set) => [set.name, set.enabled])
    },
  }
  return world
}

export type World = Awaited<ReturnType<typeof createWorld>>

/**
 * A request with a JSON content type, with `token` as the bearer (none when null) and `body` (a
 * string is sent as is; none when undefined).
 */
export const sendJson = (world: World, method: string, path: string, token: string | null, body?: unknown) =>
  world.request(path, {
    method,
    headers: {
      'Content-Type': 'application/json',
      ...(token === null ? {} : { Authorization: `Bearer ${token}` }),
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  })

/** Everything a client sees of a response, for byte-for-byte comparisons. */
export async function snapshot(res: Response) {
  const headers: Array<[string, string]> = []
  res.headers.forEach((value, name) => {
    headers.push([name, value])
  })
  return { status: res.status, headers, body: await res.text() }
}

/** Asserts a 401 with an empty body and this challenge. */
export async function expectChallenge(res: Response, error?: 'invalid_token' | 'insufficient_scope') {
  expect(res.status).toBe(401)
  expect(res.headers.get('Content-Length')).toBe('0')
  expect(res.headers.get('WWW-Authenticate')).toBe(
    error ? `Bearer realm="flowadmin", error="${error}"` : 'Bearer realm="flowadmin"',
  )
  expect(await res.text()).toBe('')
}

/** Asserts an empty 404. */
export async function expectNotFound(res: Response) {
  expect(res.status).toBe(404)
  expect(res.headers.get('Content-Length')).toBe('0')
  expect(res.headers.get('Content-Type')).toBeNull()
  expect(await res.text()).toBe('')
}

/** The fields of a good password grant for admin, with overrides. */
export const grant = (overrides: Record<string, unknown> = {}) => ({
  client_id: 'service-admin',
  grant_type: 'password',
  scope: '*',
  username: 'admin',
  password: 'pw',
  ...overrides,
})

/** Asserts the no-cache headers of the token and revoke endpoints. */
export const expectNoStore = (res: Response) => {
  expect(res.headers.get('Cache-Control')).toBe('no-store')
  expect(res.headers.get('Pragma')).toBe('no-cache')
}

const VERSIONS: Record<string, string> = { [PLAIN.name]: PLAIN.version, [SCOPED.name]: SCOPED.version }

/** A node set of PLAIN or SCOPED as the API shows it (loaded, no err, its module's version). */
export const setView = (module: string, name: string, types: string[], enabled = true) => ({
  id: `${module}/${name}`,
  name,
  types,
  enabled,
  loaded: true,
  module,
  version: VERSIONS[module],
})

/** The Node Module object of PLAIN. */
export const plainModule = (enabled: boolean) => ({
  name: PLAIN.name,
  version: PLAIN.version,
  nodes: [setView(PLAIN.name, 'random', ['random'], enabled)],
})

/** The Node Module object of SCOPED. */
export const scopedModule = (enabled: boolean) => ({
  name: SCOPED.name,
  version: SCOPED.version,
  nodes: [
    setView(SCOPED.name, 'alpha', ['alpha-in', 'alpha-out'], enabled),
    setView(SCOPED.name, 'beta', ['beta'], enabled),
    setView(SCOPED.name, 'gamma', ['gamma'], enabled),
  ],
})

/** SCOPED's path in the three spellings: raw, `%2F`, `%40` + `%2f`. */
export const SCOPED_PATHS = ['/nodes/@acme/flow-kit', '/nodes/@acme%2Fflow-kit', '/nodes/%40acme%2fflow-kit']

/** A module in the fake installer's registry once a test publishes it; not installed at first. */
export const EXTRA: ModuleDescriptor = {
  name: 'node-red-contrib-extra',
  version: '1.0.0',
  sets: [{ name: 'extra', types: ['extra'] }],
}
