// The fleet scenario: the built flowadmin in fleet mode and N real Node-RED instances whose
// @flowadmin/node-red helper has `fleet: true`. It times a module's disable (then enable) from
// `PUT /nodes/:module` at flowadmin to the last instance reporting it applied (N = 1, then 5),
// beside the same change made directly on one Node-RED's own admin API, and measures flowadmin's
// memory per connected instance.
import { spawn } from 'node:child_process'
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { startBuiltServer } from './built-server.mjs'
import { track } from './cleanup.mjs'
import { ARGON2_OPTIONS, argon2, RESOURCE_SERVER } from './flowadmin.mjs'
import { installNodeRed } from './node-red.mjs'
import { memory } from './proc.mjs'

const MODULE = 'node-red-contrib-bench-fleet'
const USER = { username: 'admin', password: 'bench-password-0123' }
const START_DEADLINE_MS = 60_000
const APPLY_DEADLINE_MS = 60_000

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** A node module of one set in `userDir`'s node_modules. */
function writeModule(userDir) {
  const dir = join(userDir, 'node_modules', MODULE)
  mkdirSync(dir, { recursive: true })
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: MODULE, version: '1.0.0', 'node-red': { nodes: { bench: 'bench.js' } } }),
  )
  writeFileSync(
    join(dir, 'bench.js'),
    "module.exports = (RED) => RED.nodes.registerType('bench-fleet', function () {})\n",
  )
  writeFileSync(
    join(dir, 'bench.html'),
    '<script type="text/html" data-template-name="bench-fleet"></script>\n',
  )
}

/**
 * Starts a Node-RED with the helper in fleet mode; resolves with its URL (and pid) once it listens.
 * `module`: the bench's node module is in its node_modules.
 */
export async function startInstance({ redJs, folder, name, url, helper, module = true }) {
  const userDir = join(folder, name)
  mkdirSync(userDir, { recursive: true })
  if (module) writeModule(userDir)
  const options = {
    url,
    clientId: RESOURCE_SERVER.id,
    clientSecret: RESOURCE_SERVER.secret,
    fleet: true,
    instanceId: name,
  }
  writeFileSync(
    join(userDir, 'settings.js'),
    [
      `const flowadmin = require(${JSON.stringify(helper)})`,
      `const options = ${JSON.stringify(options)}`,
      'module.exports = {',
      "  uiHost: '127.0.0.1', flowFile: 'flows.json', credentialSecret: false,",
      "  logging: { console: { level: 'info', metrics: false, audit: false } },",
      '  telemetry: { enabled: false, updateNotification: false }, editorTheme: { tours: false },',
      '  adminAuth: flowadmin.adminAuth(options), httpAdminMiddleware: flowadmin.httpAdminMiddleware(options),',
      '}',
      '',
    ].join('\n'),
  )
  const child = track(
    spawn(
      process.execPath,
      [redJs, '--userDir', userDir, '--settings', join(userDir, 'settings.js'), '--port', '0'],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    ),
  )
  const address = await new Promise((resolve, reject) => {
    let out = ''
    const timer = setTimeout(() => reject(new Error(`Node-RED ${name} did not start`)), START_DEADLINE_MS)
    child.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk
      const found = /Server now running at (http:\/\/[^/\s]+)/.exec(out)
      if (found) {
        clearTimeout(timer)
        resolve(found[1])
      }
    })
    child.once('exit', () => reject(new Error(`Node-RED ${name} exited`)))
  })
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGTERM')
    await exited
  }
  return { name, url: address, pid: child.pid, stop }
}

/** A token of the bench's user from the server at `url`, as client `clientId`. */
export async function tokenAt(url, clientId) {
  for (let attempt = 0; attempt < 20; attempt++) {
    const res = await fetch(`${url}/auth/token`, {
      method: 'POST',
      body: new URLSearchParams({ client_id: clientId, grant_type: 'password', scope: '*', ...USER }),
    })
    if (res.status === 200) return (await res.json()).access_token
    await sleep(500)
  }
  throw new Error(`no token from ${url}`)
}

/** Resolves once every instance named has reported the desired state's current version applied. */
async function allApplied(url, token, names) {
  const deadline = Date.now() + APPLY_DEADLINE_MS
  const headers = { authorization: `Bearer ${token}` }
  /** The module's view, or null before an instance reported it (404). */
  const moduleView = async () => {
    const res = await fetch(`${url}/nodes/${MODULE}`, { headers })
    return res.status === 200 ? res.json() : null
  }
  while (Date.now() < deadline) {
    const [instances, module] = await Promise.all([
      fetch(`${url}/fleet/instances`, { headers }).then((res) => res.json()),
      moduleView(),
    ])
    const wanted = module?.nodes[0].enabled
    const done =
      module !== null &&
      names.every((name) => {
        const own = module.instances.find((entry) => entry.id === name)
        const listed = instances.find((entry) => entry.id === name)
        return own !== undefined && own.enabled.bench === wanted && listed?.drift.length === 0
      })
    if (done) return
    await sleep(5)
  }
  throw new Error('the instances did not apply the change in time')
}

/**
 * Decides the module the instances were started with (it is undecided, "installed by hand", until
 * an operator changes it): once an instance has reported it, a PUT enabling it makes it part of the
 * desired state.
 */
async function decideModule(url, token) {
  const deadline = Date.now() + APPLY_DEADLINE_MS
  const headers = { authorization: `Bearer ${token}` }
  while ((await fetch(`${url}/nodes/${MODULE}`, { headers }).then((res) => res.status)) !== 200) {
    if (Date.now() > deadline) throw new Error(`no instance reported ${MODULE} in time`)
    await sleep(5)
  }
  const res = await fetch(`${url}/nodes/${MODULE}`, {
    method: 'PUT',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ enabled: true }),
  })
  if (res.status !== 200) throw new Error(`deciding ${MODULE} at flowadmin answered ${res.status}`)
}

/** Times `changes` alternate disables and enables through flowadmin, until every instance applied each. */
async function timeFleet(url, token, names, changes) {
  const times = []
  for (let i = 0; i < changes; i++) {
    const started = performance.now()
    const res = await fetch(`${url}/nodes/${MODULE}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: i % 2 === 1 }),
    })
    if (res.status !== 200) throw new Error(`PUT at flowadmin answered ${res.status}`)
    await allApplied(url, token, names)
    times.push(performance.now() - started)
  }
  return times
}

/** The same changes made directly on one Node-RED's own admin API (its answer ends each). */
async function timeDirect(instance, token, changes) {
  const times = []
  for (let i = 0; i < changes; i++) {
    const started = performance.now()
    const res = await fetch(`${instance.url}/nodes/${MODULE}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ enabled: i % 2 === 1 }),
    })
    if (res.status !== 200) throw new Error(`PUT at Node-RED answered ${res.status}`)
    times.push(performance.now() - started)
  }
  return times
}

/** The scenario's figures as table rows (the run's table and the docs). */
export function fleetRows(local) {
  const largest = local.sizes.at(-1)
  return [
    ...local.sizes.map((size) => [
      `fleet of ${size}: PUT to last applied, median ms`,
      local.fleetMs[size].toFixed(0),
    ]),
    ['one Node-RED directly: PUT answered, median ms', local.directMs.toFixed(1)],
    [
      `goal: fleet of ${largest} at most 2 × direct + 1000 ms`,
      local.fleetMs[largest] <= 2 * local.directMs + 1000 ? 'met' : 'missed',
    ],
    [`flowadmin RSS per connected instance KB (${SIMULATED} held polls)`, local.rssPerInstanceKb.toFixed(1)],
  ]
}

/** Simulated instances held in a poll, for the memory each costs flowadmin. */
const SIMULATED = 200

/**
 * Opens `count` polls as instances would (each its own id, reported once, then held with the
 * current ETag); resolves once all are held, with a function that ends them.
 */
async function holdPolls(url, count) {
  const authorization = `Basic ${Buffer.from(`${RESOURCE_SERVER.id}:${RESOURCE_SERVER.secret}`).toString('base64')}`
  const controller = new AbortController()
  const report = { nodeRedVersion: '4.1.15', modules: [], typesInUse: [], applied: null, failures: [] }
  const held = []
  for (let i = 0; i < count; i++) {
    const base = `${url}/fleet/instances/simulated-${i}`
    const post = await fetch(`${base}/report`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify(report),
    })
    if (post.status !== 204) throw new Error(`a simulated report answered ${post.status}`)
    const first = await fetch(`${base}/desired`, { headers: { authorization } })
    const etag = first.headers.get('etag')
    await first.arrayBuffer()
    held.push(
      fetch(`${base}/desired`, {
        headers: { authorization, 'if-none-match': etag, prefer: 'wait=30' },
        signal: controller.signal,
      }).catch(() => null),
    )
  }
  await sleep(1000)
  return async () => {
    controller.abort()
    await Promise.all(held)
  }
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/**
 * The scenario, for run.mjs's local scenarios. `quick`: 2 instances instead of 5 and two changes
 * each, so the CI smoke stays cheap.
 */
export function createFleetScenario({ quick, log }) {
  const sizes = quick ? [1, 2] : [1, 5]
  const changes = quick ? 2 : 6
  return {
    id: 'fleet-modules',
    title: `Fleet mode: PUT /nodes/:module at flowadmin until the last of N Node-RED instances applied it`,
    local: true,
    async measure({ root, folder }) {
      const redJs = await installNodeRed(log)
      const helper = new URL('packages/node-red/index.js', root).pathname
      const hash = async (secret) => argon2.hash(secret, ARGON2_OPTIONS)
      const server = await startBuiltServer('bench-fleet', {
        uiHost: '127.0.0.1',
        storage: 'memory',
        auditLog: 'off',
        fleet: { modules: true },
        adminAuth: {
          type: 'credentials',
          users: [{ username: USER.username, password: await hash(USER.password), permissions: '*' }],
          resourceServers: [
            { id: RESOURCE_SERVER.id, secret: await hash(RESOURCE_SERVER.secret), fleet: true },
          ],
        },
      })
      const instances = []
      try {
        const token = await tokenAt(server.url, 'service-admin')
        await sleep(1000)
        const fleet = {}
        for (const size of sizes) {
          while (instances.length < size) {
            const name = `edge-${instances.length + 1}`
            instances.push(await startInstance({ redJs, folder, name, url: server.url, helper }))
          }
          const names = instances.map((instance) => instance.name)
          if (size === sizes[0]) await decideModule(server.url, token)
          await allApplied(server.url, token, names)
          fleet[size] = await timeFleet(server.url, token, names, changes)
        }
        // Many more instances than Node-REDs can run here: polls held as the helper holds them.
        const rssBeforePolls = memory(server.child.pid).rssMb
        const release = await holdPolls(server.url, SIMULATED)
        const rssPolls = memory(server.child.pid).rssMb
        await release()
        const own = await tokenAt(instances[0].url, 'node-red-admin')
        const direct = await timeDirect(instances[0], own, changes)
        return {
          sizes,
          fleetMs: Object.fromEntries(sizes.map((size) => [size, median(fleet[size])])),
          directMs: median(direct),
          rssPerInstanceKb: ((rssPolls - rssBeforePolls) * 1024) / SIMULATED,
        }
      } finally {
        for (const instance of instances) await instance.stop()
        await server.stop()
      }
    },
    describe: (result) =>
      `${result.sizes.map((size) => `N=${size} ${result.fleetMs[size].toFixed(0)} ms`).join(', ')}; direct ${result.directMs.toFixed(1)} ms`,
    combine(rounds) {
      const mean = (get) => rounds.reduce((sum, round) => sum + get(round), 0) / rounds.length
      const { sizes } = rounds[0]
      return {
        kind: 'fleet-modules',
        rounds: rounds.length,
        sizes,
        fleetMs: Object.fromEntries(sizes.map((size) => [size, mean((round) => round.fleetMs[size])])),
        directMs: mean((round) => round.directMs),
        rssPerInstanceKb: mean((round) => round.rssPerInstanceKb),
      }
    },
    rows: fleetRows,
  }
}
