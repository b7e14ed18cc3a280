// What is measured. Each scenario loads one started server for a window (after a warm-up window
// of the same load) and returns the load's summary; measure.mjs starts and stops the servers.
import { directoryRows, measureDirectory } from './directory.mjs'
import { runFleet } from './fleet.mjs'
import { RESOURCE_SERVER } from './flowadmin.mjs'
import { runLoad, runPaced, waitForIdle } from './load.mjs'
import { measureSqliteCommits } from './sqlite-commits.mjs'
import { BENCH_MODULES } from './targets.mjs'
import { measureTrail, trailTable } from './trail.mjs'

const FORM = 'application/x-www-form-urlencoded'
const REQUEST_TIMEOUT_MS = 15_000

/** Logs in once with the bench user; returns the access token. */
export async function login({ instance, target, credentials }) {
  const response = await fetch(`${instance.url}/auth/token`, {
    method: 'POST',
    headers: { 'content-type': FORM },
    body: tokenForm(target, credentials),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  })
  const body = await response.text()
  if (response.status !== 200) throw new Error(`${target.name}: login answered ${response.status} ${body}`)
  return JSON.parse(body).access_token
}

/** The routes a baseline answers, as flowadmin answers them: status, headers (not per-response ones), body. */
export async function recordRoutes(instance, token) {
  const perResponse = new Set(['date', 'content-length', 'connection', 'keep-alive', 'transfer-encoding'])
  const routes = {}
  for (const [path, headers] of [
    ['/auth/login', {}],
    ['/settings', bearer(token)],
  ]) {
    const response = await fetch(`${instance.url}${path}`, {
      headers,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    })
    const body = await response.text()
    if (response.status !== 200) throw new Error(`recording ${path}: flowadmin answered ${response.status}`)
    routes[path] = {
      status: response.status,
      headers: Object.fromEntries([...response.headers].filter(([name]) => !perResponse.has(name))),
      body,
    }
  }
  return routes
}

function tokenForm(target, { username, password }) {
  return new URLSearchParams({
    client_id: target.clientId,
    grant_type: 'password',
    scope: '*',
    username,
    password,
  }).toString()
}

/** Sets a module's state outside the measurement (so the measured requests all change it). */
async function setModule(instance, token, module, enabled) {
  const response = await fetch(`${instance.url}/nodes/${module}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ enabled }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  })
  await response.arrayBuffer()
  if (response.status !== 200) throw new Error(`PUT /nodes/${module} answered ${response.status}`)
}

const bearer = (token) => ({ authorization: `Bearer ${token}` })

function getLoad(path, { authenticated, connections = 10 }) {
  return ({ instance, token, durationMs }) =>
    runLoad({
      url: `${instance.url}${path}`,
      pid: instance.pid,
      peerPids: instance.peerPids,
      durationMs,
      connections,
      headers: authenticated ? bearer(token) : undefined,
    })
}

/** Every connection owns one module and alternates disable/enable on it: each request is a real change. */
function toggleLoad(connections) {
  return async ({ instance, token, durationMs }) => {
    const modules = BENCH_MODULES.slice(0, connections)
    for (const module of modules) await setModule(instance, token, module, true)
    let next = 0
    return runLoad({
      url: instance.url,
      pid: instance.pid,
      durationMs,
      connections,
      setupClient(client) {
        const module = modules[next++ % modules.length]
        const put = (enabled) => ({
          method: 'PUT',
          path: `/nodes/${module}`,
          headers: { ...bearer(token), 'content-type': 'application/json' },
          body: JSON.stringify({ enabled }),
        })
        client.setRequests([put(false), put(true)])
      },
    })
  }
}

function loginLoad(connections, amount) {
  return ({ instance, target, credentials, durationMs }) =>
    runLoad({
      url: `${instance.url}/auth/token`,
      pid: instance.pid,
      durationMs,
      connections,
      amount,
      method: 'POST',
      headers: { 'content-type': FORM },
      body: tokenForm(target, credentials),
    })
}

/** Each request revokes the next unused token of the seeded pool, with itself as the bearer (a logout). */
function revokeLoad({ instance, pool, durationMs }) {
  const remaining = pool.tokens.length - pool.next
  if (remaining < 10) throw new Error('the pool of tokens to revoke is used up')
  return runLoad({
    url: instance.url,
    pid: instance.pid,
    durationMs,
    connections: 10,
    amount: remaining,
    requests: [
      {
        method: 'POST',
        path: '/auth/revoke',
        setupRequest(request) {
          const token = pool.tokens[pool.next++]
          request.headers = { ...request.headers, ...bearer(token), 'content-type': FORM }
          request.body = `token=${encodeURIComponent(token)}`
          return request
        },
      },
    ],
  }).then((result) => ({ ...result, poolExhausted: pool.next >= pool.tokens.length }))
}

/** RFC 6749 §2.3.1: the client's id and secret, each form-encoded, joined and base64'd. */
function basicAuthorization({ id, secret }) {
  const form = (text) => new URLSearchParams([['', text]]).toString().slice(1)
  return `Basic ${Buffer.from(`${form(id)}:${form(secret)}`).toString('base64')}`
}

/** One introspection of `token` by the bench's resource server; throws unless the token is active. */
export async function checkIntrospection(instance, token) {
  const response = await fetch(`${instance.url}/auth/introspect`, {
    method: 'POST',
    headers: { authorization: basicAuthorization(RESOURCE_SERVER), 'content-type': FORM },
    body: `token=${encodeURIComponent(token)}`,
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  })
  const body = await response.text()
  if (response.status !== 200 || JSON.parse(body).active !== true)
    throw new Error(`POST /auth/introspect answered ${response.status} ${body}, not an active token`)
}

/**
 * A token of the bench user for the bench's resource server (the one audience that may introspect
 * it): the password grant asked with the server's credentials, as a Node-RED editor's login is.
 */
export async function resourceServerToken({ instance, credentials }) {
  const response = await fetch(`${instance.url}/auth/token`, {
    method: 'POST',
    headers: { authorization: basicAuthorization(RESOURCE_SERVER), 'content-type': FORM },
    body: new URLSearchParams({ grant_type: 'password', scope: '', ...credentials }).toString(),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  })
  const body = await response.text()
  if (response.status !== 200) throw new Error(`resource server login answered ${response.status} ${body}`)
  return JSON.parse(body).access_token
}

/**
 * The bench's resource server introspecting `token` at `instance` on `connections`, closed loop,
 * for `durationMs` (see runLoad).
 */
export function introspections({ instance, token, durationMs, connections }) {
  return runLoad({
    url: `${instance.url}/auth/introspect`,
    pid: instance.pid,
    durationMs,
    connections,
    method: 'POST',
    headers: { authorization: basicAuthorization(RESOURCE_SERVER), 'content-type': FORM },
    body: `token=${encodeURIComponent(token)}`,
  })
}

/**
 * The bench's resource server introspecting the bench user's live token for it, and beside it, on the
 * same server and the same number of connections, authenticated GET /settings with that token:
 * `reference` in the result. The two windows follow each other (the server idle in between),
 * in one order in one measured round and the other in the next; the warm-up runs both, in the
 * order of the window it precedes, and its first introspection is the one that verifies the
 * secret (argon2). A profiled round runs the introspections alone, so its profile is theirs.
 */
function introspectLoad(connections) {
  let measured = 0
  /** The token introspected, one per started server. */
  const tokens = new WeakMap()
  return async (context) => {
    const { instance, durationMs, warmup, profiling } = context
    if (!tokens.has(instance)) tokens.set(instance, await resourceServerToken(context))
    const token = tokens.get(instance)
    const introspect = () => introspections({ instance, token, durationMs, connections })
    if (warmup) await checkIntrospection(instance, token)
    if (profiling) return introspect()
    const get = getLoad('/settings', { authenticated: true, connections })
    const introspectFirst = measured % 2 === 1
    if (!warmup) measured++
    const between = () => waitForIdle(instance.pid)
    if (introspectFirst) {
      const introspections = await introspect()
      await between()
      return { ...introspections, reference: await get(context) }
    }
    const reference = await get(context)
    await between()
    return { ...(await introspect()), reference }
  }
}

/**
 * The fleet's introspections against `instance` (and `peer`, when given): the clients split
 * between them. The warm-up verifies the resource server's secret once first (argon2).
 */
export function fleetLoad({ clients, rate }) {
  return async ({ instance, peer, seedTokens, durationMs, warmup }) => {
    const servers = peer ? [instance, peer] : [instance]
    if (warmup) for (const server of servers) await checkIntrospection(server, seedTokens[0])
    const result = await runFleet({ servers, tokens: seedTokens, clients, rate, durationMs })
    if (result.inactive > 0)
      throw new Error(`${result.inactive} introspections said a live token is not active`)
    return result
  }
}

/** Authenticated GETs at a fixed rate while logins run flat out on 4 connections. */
function stormLoad(rate) {
  return async (context) => {
    const { instance, token, durationMs, loopDelay } = context
    loopDelay?.reset()
    const [gets, logins] = await Promise.all([
      runPaced({ port: instance.port, path: '/settings', headers: bearer(token), rate, durationMs }),
      loginLoad(4)(context),
    ])
    // Hashing must never hold the event loop: its delay over the same window, seen from inside.
    const delay = loopDelay ? await loopDelay.read() : null
    return { ...gets, cpuMs: logins.cpuMs, cpuPerRequest: Number.NaN, logins, loopDelay: delay }
  }
}

/** A summary without its latency arrays (for the JSON file). */
export function strip({ latencies, ...rest }) {
  for (const key of ['logins', 'reference', 'ask']) if (rest[key]) rest[key] = strip(rest[key])
  return rest
}

/**
 * The scenarios, in run order. `seed(target)` is how many live tokens the store starts with
 * (the first `pool` of them are the ones revoked); `floor` asks for the argon2id floor beside it.
 */
export function createScenarios({ sessionSizes, pools, stormRate, fleet }) {
  const list = [
    {
      // flowadmin with the bench's demo settings and with every optional feature configured, beside
      // a bare Hono server (bench/baseline-server.mjs) and, with --peer, Node-RED; ratios to Hono.
      id: 'start',
      title:
        'Start to listening (spawn to the "listening" line), demo settings and every feature configured, beside bare Hono, 5 starts',
      startOnly: true,
      starts: 5,
      targets: ['flowadmin', 'flowadmin-full', 'node-red', 'hono'],
      baselines: true,
      ratioTo: 'hono',
      // A build from before some feature (--server) refuses the full settings: not measured there.
      mayNotStart: ['flowadmin-full'],
    },
    {
      id: 'sqlite-commits',
      title: 'Raw better-sqlite3 commits in this process (WAL, synchronous=FULL): the disk floor',
      local: true,
      async measure({ root, folder, durationMs }) {
        const single = await measureSqliteCommits({ root, folder, durationMs: durationMs / 2, perCommit: 1 })
        const grouped = await measureSqliteCommits({
          root,
          folder,
          durationMs: durationMs / 2,
          perCommit: 10,
        })
        return { single, grouped }
      },
      describe: ({ single, grouped }) =>
        `${single.commitsPerSecond.toFixed(0)} single-change commits/s, ${grouped.changesPerSecond.toFixed(0)} changes/s at 10 a commit`,
    },
    {
      id: 'trail',
      title:
        'The trail: reports taken (POST /audit/events), GET /audit?actor= over a large trail, disk per million',
      local: true,
      measure: ({ root, folder, durationMs, quick, pgUrl }) =>
        measureTrail({ root, folder, durationMs, events: quick ? 20_000 : 1_000_000, pgUrl }),
      combine: (rounds) => rounds,
      table: trailTable,
      describe: (result) =>
        `sqlite ${result.sqlite.ingest.toFixed(0)} events/s, p99 ${result.sqlite.search.p99.toFixed(2)} ms` +
        (result.postgres && !result.postgres.error
          ? `; postgres ${result.postgres.ingest.toFixed(0)} events/s, p99 ${result.postgres.search.p99.toFixed(2)} ms`
          : ''),
    },
    {
      id: 'login-page',
      title: 'GET /auth/login',
      load: getLoad('/auth/login', { authenticated: false }),
      baselines: true,
    },
    {
      id: 'healthz',
      title: 'GET /healthz (flowadmin only: Node-RED has no health route)',
      load: getLoad('/healthz', { authenticated: false }),
      targets: ['flowadmin'],
    },
    {
      id: 'settings',
      title: 'GET /settings (authenticated)',
      load: getLoad('/settings', { authenticated: true }),
      baselines: true,
      besideSqlite: true,
    },
    {
      id: 'introspect',
      title:
        'POST /auth/introspect (a resource server asking about a live token) beside authenticated GET /settings, 10 connections each',
      load: introspectLoad(10),
      targets: ['flowadmin', 'flowadmin-sqlite'],
      resourceServers: true,
      paired: { label: 'introspections', reference: 'GET /settings' },
    },
    {
      id: 'fleet',
      title: `A fleet: ${fleet.clients} resource servers (each its own keep-alive connections) introspecting ${fleet.clients} live tokens, ${fleet.rate}/s in all`,
      load: fleetLoad(fleet),
      targets: ['flowadmin', 'flowadmin-sqlite'],
      resourceServers: true,
      seed: () => fleet.clients,
      fleet: true,
    },
    {
      id: 'nr-flows',
      title:
        "Node-RED's GET /flows with its own tokens, and with flowadmin's through @flowadmin/node-red (cacheMs 0, 1000), 10 connections",
      load: getLoad('/flows', { authenticated: true }),
      targets: ['nr-own', 'nr-fa-cache0', 'nr-fa-cache1000'],
      ratioTo: 'nr-own',
      peerCpu: 'flowadmin',
      // The profiled round: the flowadmin behind the helper, which every request asks.
      profileTarget: 'nr-fa-cache0',
    },
    {
      // With the raw commit, the floor of a toggle on one connection: a toggle is an
      // authenticated request that also makes a durable change.
      id: 'settings-1',
      title: 'GET /settings (authenticated), 1 connection',
      load: getLoad('/settings', { authenticated: true, connections: 1 }),
      targets: ['flowadmin'],
    },
    {
      id: 'toggle-1',
      title: 'PUT /nodes/:module, a real change each time, 1 connection',
      load: toggleLoad(1),
    },
    {
      id: 'toggle-10',
      title: 'PUT /nodes/:module, a real change each time, 10 connections (one module each)',
      load: toggleLoad(10),
    },
    { id: 'login', title: 'POST /auth/token (logins), 4 connections', load: loginLoad(4), floor: true },
    {
      id: 'directory',
      title:
        'POST /auth/token of a person of a local slapd (adminAuth.ldap, StartTLS) beside a configured user (argon2id), same server, 4 connections each',
      local: true,
      measure: measureDirectory,
      combine: (rounds) => rounds,
      rows: directoryRows,
      describe: (round) =>
        `${round.directory.rps.toFixed(0)} directory sign-ins/s, ${round.argon2.rps.toFixed(0)} argon2id sign-ins/s`,
    },
    {
      id: 'logins-100',
      title: '100 logins, 4 connections, then resident memory once idle',
      load: (context) => loginLoad(4, 100)({ ...context, durationMs: 120_000 }),
      // The warm-up would be 100 logins more: this scenario is about the first hundred.
      noWarmup: true,
    },
    {
      id: 'revoke',
      title: 'POST /auth/revoke (revokes), 10 connections',
      load: revokeLoad,
      seed: (target) => pools[target],
      pool: true,
    },
  ]
  for (const size of sessionSizes) {
    list.push({
      id: `login-${size}`,
      title: `POST /auth/token with ${size} live sessions, 4 connections`,
      load: loginLoad(4),
      seed: () => size,
      sessions: size,
    })
    list.push({
      id: `revoke-${size}`,
      title: `POST /auth/revoke with ${size} live sessions besides the pool revoked, 10 connections`,
      load: revokeLoad,
      seed: (target) => size + pools[target],
      pool: true,
      sessions: size,
    })
  }
  list.push({
    id: 'storm',
    title: `Login storm: GET /settings at ${stormRate} req/s while logins run on 4 connections`,
    load: stormLoad(stormRate),
    storm: true,
    loopDelay: true,
  })
  return list
}
