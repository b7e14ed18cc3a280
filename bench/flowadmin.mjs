// The flowadmin target: a user folder with settings, flows and the bench modules, and tokens issued
// straight into its SQLite file (through the built core and SQLite stores) before the server starts.
import { createHash, randomBytes } from 'node:crypto'
import { copyFileSync, existsSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'

/** This repository: the flowadmin build measured unless `--server DIR` names another checkout. */
export const repositoryRoot = new URL('../', import.meta.url)
const serverRequire = createRequire(new URL('packages/server/package.json', repositoryRoot))

export const FLOWADMIN_CLIENT = 'service-admin'
/** The CLI of the build rooted at `root` (a URL of a checkout's root folder). */
export const flowadminBin = (root) => new URL('packages/server/bin/flowadmin.cjs', root).pathname

/** The server's own argon2 module and its OWASP parameters (m=19456 KiB, t=2, p=1). */
export const argon2 = serverRequire('argon2')
export const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 }

/** Checks that the workspace at `root` was built, with a message that says what to do. */
export function checkBuilt(root) {
  for (const path of [
    'packages/server/dist/cli/main.js',
    'packages/core/dist/index.js',
    'packages/adapter-sqlite/dist/index.js',
  ]) {
    if (!existsSync(new URL(path, root))) {
      throw new Error(`${new URL(path, root).pathname} is missing: build the workspace first (pnpm build)`)
    }
  }
}

/**
 * The resource server of the bench (a Node-RED instance through @flowadmin/node-red, or the
 * introspection load): its id and secret as it sends them; flowadmin's settings hold the secret's hash.
 */
export const RESOURCE_SERVER = { id: 'fleet', secret: 'bench-fleet-secret-0123' }

/**
 * Writes settings.json for the user folder; returns its path. `resourceServers`:
 * adminAuth.resourceServers ({id, secret: its hash}), none when not given. `features`: 'demo' (a
 * user, no audit log: what a first try configures) or 'full' (every optional feature besides, see
 * {@link everyFeature}); `more`: further top-level settings (e.g. `fleet`).
 */
export function writeFlowadminSettings(
  userDir,
  { username, passwordHash, postgresUrl, resourceServers, features = 'demo', more = {} },
) {
  const demo = {
    userDir: '.',
    uiHost: '127.0.0.1',
    ...(postgresUrl ? { storage: 'postgres', postgres: { url: postgresUrl } } : {}),
    adminAuth: {
      type: 'credentials',
      users: [{ username, password: passwordHash, permissions: '*' }],
      ...(resourceServers ? { resourceServers } : {}),
    },
    auditLog: 'off',
    ...more,
  }
  const settings = features === 'full' ? everyFeature(demo) : demo
  const file = join(userDir, 'settings.json')
  writeFileSync(file, `${JSON.stringify(settings, null, 2)}\n`)
  return file
}

/** Where nothing answers: the identity provider's and the directory's address in the full settings. */
const NOWHERE = '127.0.0.1:9'
/** The second factors' key of this run (the examples' published key is refused at start). */
const MFA_KEY = randomBytes(36).toString('base64url')

/**
 * `demo` with every optional feature flowadmin has configured besides: single sign-on (an OpenID
 * provider), a directory (LDAP with StartTLS), second factors, passkeys, fleet mode with its
 * resource server (a machine secret's digest), the audit trail's bounds and an audit log file,
 * metrics on a listener of their own, CORS, trusted proxies, connection limits, API token
 * lifetimes, the throttle, the login queue and the palette's policy. The provider and the
 * directory are at an address where nothing answers: flowadmin asks neither before a sign-in
 * needs it, so a start must not wait for them.
 */
export function everyFeature(demo) {
  const digest = `sha256:${createHash('sha256').update(RESOURCE_SERVER.secret).digest('hex')}`
  return {
    ...demo,
    adminAuth: {
      ...demo.adminAuth,
      oidc: {
        issuer: `http://${NOWHERE}/realms/bench`,
        clientId: 'flowadmin',
        clientSecret: 'bench-oidc-client-secret',
        label: 'Sign in with the bench provider',
        permissions: { claim: 'groups', map: { admins: '*', operators: ['read', 'nodes.write'] } },
      },
      ldap: {
        url: `ldap://${NOWHERE}`,
        startTls: true,
        bindDn: 'cn=flowadmin,ou=services,dc=bench,dc=example',
        bindPassword: 'bench-directory-password',
        userSearch: { base: 'ou=people,dc=bench,dc=example', filter: '(uid={username})' },
        groups: { base: 'ou=groups,dc=bench,dc=example', nested: true },
        permissions: { map: { 'cn=admins,ou=groups,dc=bench,dc=example': '*' } },
      },
      // Second factors required of no one: the password grant keeps working for a scenario that logs in.
      mfa: { key: MFA_KEY, issuer: 'flowadmin bench', require: 'none' },
      webauthn: { rpId: 'localhost', rpName: 'flowadmin bench', origins: ['http://localhost:1880'] },
      resourceServers: [
        ...(demo.adminAuth.resourceServers ?? []).filter((server) => server.id !== RESOURCE_SERVER.id),
        {
          id: RESOURCE_SERVER.id,
          secret: digest,
          redirectUris: ['https://nodered.bench.example/auth/strategy/callback'],
          fleet: true,
        },
      ],
      clients: ['node-red-admin'],
      sessionExpiryTime: 86_400,
      throttle: { windowSeconds: 600, maxFailuresPerUser: 5, maxFailuresPerAddress: 20 },
      loginQueue: { maxWaiting: 64, maxWaitingKnown: 16 },
      apiTokens: { expiryTime: 2_592_000, maxExpiryTime: 31_536_000 },
    },
    auditLog: { file: 'audit.log' },
    auditTrail: { maxAgeDays: 30, maxEvents: 1_000_000, reported: { maxAgeDays: 7, eventsPerMinute: 600 } },
    trustProxy: ['127.0.0.1', '10.0.0.0/8'],
    httpAdminCors: { origin: ['https://editor.bench.example'] },
    httpServer: {
      headersTimeout: 10_000,
      requestTimeout: 30_000,
      keepAliveTimeout: 5000,
      maxHeaderSize: 16_384,
    },
    apiMaxLength: '1mb',
    metrics: { host: '127.0.0.1', port: 0 },
    externalModules: {
      palette: {
        allowList: ['node-red-contrib-*', '@flowadmin/*'],
        denyList: ['node-red-contrib-unwanted@<2'],
        registry: 'https://registry.npmjs.org/',
        timeout: 120,
        wait: 10,
      },
    },
    fleet: { modules: true, prune: false, wait: 5, hold: 15 },
  }
}

/** The database file flowadmin keeps in the user folder. */
export const flowadminDb = (userDir) => join(userDir, 'flowadmin.db')

/**
 * A core over `stores` that issues tokens to `username` as the server will see them: the user's
 * password hash is the server's (`passwordHash`), so the tokens carry its fingerprint, and
 * `issue()` logs in without running argon2 (the seeding verifier compares the hash itself).
 */
export async function createSeedingCore(stores, { username, passwordHash, root, audience }) {
  const { createCore } = await import(new URL('packages/core/dist/index.js', root).href)
  // Tokens for the resource server (audience 'fleet') are issued to it, as a Node-RED editor's
  // login through the helper is: the server's secret is given here as its digest.
  const digest = `sha256:${createHash('sha256').update(RESOURCE_SERVER.secret).digest('hex')}`
  const core = createCore(
    {
      stores,
      verifier: { dummyHash: '\u0000', verify: async (hash, password) => hash === password },
      loader: { load: async () => ({ ok: true }) },
      typeUsage: { typesInUse: async () => new Set() },
    },
    {
      adminAuth: {
        users: [{ username, password: passwordHash, permissions: '*' }],
        resourceServers: [{ id: RESOURCE_SERVER.id, secret: digest }],
      },
    },
  )
  const request = { grantType: 'password', scope: '*', username, password: passwordHash }
  return async function issue() {
    const issued =
      audience === RESOURCE_SERVER.id
        ? await core.loginAsClient(RESOURCE_SERVER, request, '127.0.0.1')
        : await core.login({ ...request, clientId: FLOWADMIN_CLIENT }, '127.0.0.1')
    if (!issued.ok) throw new Error(`seeding a token failed: ${issued.error.code}`)
    return issued.value.accessToken
  }
}

/**
 * Creates a database at `dbPath` holding `count` live tokens of `username`, issued through the
 * core (the same hashing and records as a real login). `passwordHash` is the user's hash in the
 * settings the server runs with: tokens are bound to it. Returns the tokens, in issue order.
 */
export async function seedFlowadminTokens(dbPath, { count, username, passwordHash, root, audience }) {
  const { openDatabase, createSqliteStores } = await import(
    new URL('packages/adapter-sqlite/dist/index.js', root).href
  )
  const db = openDatabase(dbPath)
  try {
    // Seeding is not what is measured: one transaction per batch instead of one sync per token.
    db.exec('PRAGMA synchronous = OFF')
    const stores = createSqliteStores(db)
    const issue = await createSeedingCore(stores, { username, passwordHash, root, audience })
    const tokens = []
    const batch = 5000
    for (let done = 0; done < count; done += batch) {
      db.exec('BEGIN')
      for (let i = done; i < Math.min(count, done + batch); i++) {
        tokens.push(await issue())
      }
      db.exec('COMMIT')
    }
    db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    await stores.close()
    return tokens
  } finally {
    db.close()
  }
}

/** Copies a seeded database (checkpointed, so the main file is the whole of it). */
export function copyDatabase(from, userDir) {
  copyFileSync(from, flowadminDb(userDir))
}

/**
 * The argon2id floor: verifications per second at OWASP parameters with `concurrency` running at
 * once (by default as many as the server runs: one fewer than the cores, at least one), measured
 * over `durationMs` in this process with nothing else loaded.
 */
export async function measureArgon2Floor({ durationMs, concurrency }) {
  concurrency ??= (await import('@flowadmin/server')).DEFAULT_VERIFY_CONCURRENCY
  const hash = await argon2.hash('argon2id-floor', ARGON2_OPTIONS)
  const latencies = []
  const start = performance.now()
  const end = start + durationMs
  let stopAt = null
  const worker = async () => {
    while (performance.now() < end) {
      const t0 = performance.now()
      if (!(await argon2.verify(hash, 'argon2id-floor'))) throw new Error('argon2 verify failed')
      const t1 = performance.now()
      if (t1 <= end) latencies.push(t1 - t0)
      else stopAt ??= end
    }
  }
  await Promise.all(Array.from({ length: concurrency }, worker))
  const elapsedMs = (stopAt ?? performance.now()) - start
  latencies.sort((a, b) => a - b)
  return {
    concurrency,
    count: latencies.length,
    elapsedMs,
    perSecond: (latencies.length * 1000) / elapsedMs,
    p50: latencies[Math.floor(latencies.length / 2)] ?? Number.NaN,
  }
}
