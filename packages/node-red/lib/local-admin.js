'use strict'

// This instance's own admin API, called over loopback with the fleet agent's token: how the agent
// reads what Node-RED has and applies flowadmin's desired modules, as the editor's palette would.

const dns = require('node:dns')
const http = require('node:http')
const https = require('node:https')
const net = require('node:net')
const os = require('node:os')

/** How long a call may take; an install runs npm, which may take minutes. */
const CALL_TIMEOUT_MS = 30_000
const INSTALL_TIMEOUT_MS = 10 * 60_000

const firstLine = (text) =>
  String(text ?? '')
    .split('\n')
    .find((line) => line.trim() !== '') ?? ''
const short = (text) => firstLine(text).trim().slice(0, 1000)

/** The types the deployed flows use, from GET /flows (v1: an array; v2: `{flows}`). */
function typesOf(flows) {
  const nodes = Array.isArray(flows) ? flows : Array.isArray(flows?.flows) ? flows.flows : []
  const types = new Set()
  for (const node of nodes) if (typeof node?.type === 'string') types.add(node.type)
  return [...types].sort()
}

/** The modules of GET /nodes (a list of node sets), without Node-RED's own. */
function modulesOf(list) {
  const modules = new Map()
  for (const set of Array.isArray(list) ? list : []) {
    if (typeof set?.module !== 'string' || set.module === 'node-red' || typeof set.name !== 'string') continue
    let module = modules.get(set.module)
    if (module === undefined) {
      module = { name: set.module, version: String(set.version ?? ''), sets: [] }
      modules.set(set.module, module)
    }
    const entry = {
      name: set.name,
      types: Array.isArray(set.types) ? set.types.filter((type) => typeof type === 'string') : [],
      enabled: set.enabled !== false,
      loaded: set.enabled !== false && set.err === undefined && set.loaded !== false,
    }
    if (set.err !== undefined) entry.err = short(set.err)
    module.sets.push(entry)
  }
  return [...modules.values()]
}

const isLoopback = (address) => address === '::1' || /^127\./.test(address) || /^::ffff:127\./i.test(address)

/** This machine's addresses (its interfaces'), loopback included. */
function localAddresses(interfaces = os.networkInterfaces) {
  const addresses = new Set(['127.0.0.1', '::1'])
  try {
    for (const list of Object.values(interfaces() ?? {})) {
      for (const entry of list ?? []) {
        if (typeof entry?.address === 'string') addresses.add(entry.address.replace(/%.*$/, '').toLowerCase())
      }
    }
  } catch {
    // Loopback only.
  }
  return addresses
}

/** Whether a peer's address (a socket's remoteAddress) is loopback or one of this machine's. */
function isLocalPeer(address, interfaces) {
  if (typeof address !== 'string' || address === '') return false
  const plain = address.replace(/^::ffff:(?=\d+\.\d+\.\d+\.\d+$)/i, '').toLowerCase()
  return isLoopback(plain) || localAddresses(interfaces).has(plain)
}

/**
 * The IP address the agent calls its own Node-RED on, from `uiHost`: never a name, so the agent's
 * token cannot go to whatever a name resolves to. Loopback for none or a wildcard; an IP literal
 * that is loopback or one of this machine's addresses as it is; a name resolved once, to one of
 * this machine's addresses. `{address}` or `{refused: why}`; never rejects.
 *
 * @param {unknown} uiHost
 * @param {{lookup?: typeof dns.promises.lookup, interfaces?: typeof os.networkInterfaces}} [hooks]
 */
async function adminAddressOf(uiHost, hooks = {}) {
  const lookup = hooks.lookup ?? dns.promises.lookup
  const host = typeof uiHost === 'string' ? uiHost.trim().replace(/^\[(.*)\]$/, '$1') : ''
  if (host === '' || host === '0.0.0.0' || host === '::') return { address: '127.0.0.1' }
  const local = localAddresses(hooks.interfaces)
  const isLocal = (address) => isLoopback(address) || local.has(address.toLowerCase())
  if (net.isIP(host) !== 0) {
    return isLocal(host) ? { address: host } : { refused: `uiHost ${host} is not an address of this machine` }
  }
  let found
  try {
    found = await lookup(host, { all: true })
  } catch (error) {
    return {
      refused: `uiHost ${JSON.stringify(host.slice(0, 253))} does not resolve (${String(error?.code ?? error?.message ?? error).slice(0, 100)})`,
    }
  }
  const addresses = (Array.isArray(found) ? found : [])
    .map((entry) => entry?.address)
    .filter((a) => typeof a === 'string')
  const chosen = addresses.find(isLoopback) ?? addresses.find(isLocal)
  return chosen !== undefined
    ? { address: chosen }
    : { refused: `uiHost ${JSON.stringify(host.slice(0, 253))} resolves to no address of this machine` }
}

/** Where this Node-RED's admin API answers on this host: `uiHost` is an address of this machine. */
function adminBase(nodeRed) {
  const host = nodeRed.uiHost
  const loopback =
    typeof host !== 'string' || net.isIP(host) === 0 || host === '0.0.0.0' || host === '::'
      ? '127.0.0.1'
      : host
  const root = typeof nodeRed.httpAdminRoot === 'string' ? nodeRed.httpAdminRoot.replace(/\/+$/, '') : ''
  return {
    secure: Boolean(nodeRed.https),
    host: loopback.includes(':') ? `[${loopback}]` : loopback,
    hostname: loopback,
    port: nodeRed.serverPort,
    root,
  }
}

/**
 * @param {object} nodeRed Node-RED's settings object (serverPort, httpAdminRoot, https), with `uiHost`
 *   an address of this machine (see adminAddressOf); a name is never called
 * @param {string} token the agent's own token
 */
function createLocalAdmin(nodeRed, token) {
  const base = adminBase(nodeRed)
  const transport = base.secure ? https : http

  /** One call: `{status, body}` (body parsed as JSON, or null), or null when there was no answer. */
  function call(method, pathname, body, timeoutMs = CALL_TIMEOUT_MS) {
    return new Promise((resolve) => {
      const payload = body === undefined ? null : Buffer.from(JSON.stringify(body))
      const request = transport.request(
        {
          method,
          hostname: base.hostname,
          port: base.port,
          path: `${base.root}${pathname}`,
          headers: {
            Authorization: `Bearer ${token}`,
            Accept: 'application/json',
            'Node-RED-API-Version': 'v1',
            ...(payload && { 'Content-Type': 'application/json', 'Content-Length': payload.length }),
          },
          // Its own certificate, on its own address: whatever names it carries.
          rejectUnauthorized: false,
          timeout: timeoutMs,
        },
        (response) => {
          const chunks = []
          response.on('data', (chunk) => chunks.push(chunk))
          response.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8')
            let parsed = null
            try {
              parsed = text === '' ? null : JSON.parse(text)
            } catch {
              parsed = text
            }
            resolve({ status: response.statusCode ?? 0, body: parsed })
          })
          response.on('error', () => resolve(null))
        },
      )
      request.on('timeout', () => request.destroy(new Error('timeout')))
      request.on('error', () => resolve(null))
      request.end(payload ?? undefined)
    })
  }

  /** Node-RED's message of a refusal, one line. */
  const messageOf = (answer) =>
    answer === null
      ? 'Node-RED did not answer'
      : short(
          answer.body?.message ?? (typeof answer.body === 'string' ? answer.body : `HTTP ${answer.status}`),
        )

  async function installed() {
    const answer = await call('GET', '/nodes')
    return answer?.status === 200
      ? new Map(modulesOf(answer.body).map((module) => [module.name, module]))
      : null
  }

  // A package name is URL-safe as it is; Node-RED's routes match a scoped one's `@` unencoded.
  const modulePath = (name) => `/nodes/${name}`

  return {
    /**
     * Makes this Node-RED's modules what `desired` says: removals, installs (those in
     * `failedInstalls` are not tried again), then each module's node sets. Returns what Node-RED
     * or npm refused, or null when Node-RED could not be asked.
     */
    async apply(desired, failedInstalls) {
      let local = await installed()
      if (local === null) return null
      const failures = []
      let changed = false
      const installs = new Set(desired.installs.map((entry) => entry.module))
      const removals = [...desired.removals]
      if (desired.prune) {
        for (const name of local.keys()) if (!installs.has(name)) removals.push(name)
      }
      for (const name of removals) {
        if (!local.has(name)) continue
        const answer = await call('DELETE', modulePath(name), undefined, INSTALL_TIMEOUT_MS)
        if (answer?.status === 204 || answer?.status === 200) changed = true
        else failures.push({ module: name, action: 'remove', message: messageOf(answer) })
      }
      for (const entry of desired.installs) {
        if (local.has(entry.module)) continue
        const failed = failedInstalls.get(entry.module)
        if (failed !== undefined) {
          failures.push({ module: entry.module, action: 'install', message: failed })
          continue
        }
        const request = { module: entry.module, ...(entry.version !== null && { version: entry.version }) }
        const answer = await call('POST', '/nodes', request, INSTALL_TIMEOUT_MS)
        if (answer?.status === 200) changed = true
        else {
          const message = messageOf(answer)
          failedInstalls.set(entry.module, message)
          failures.push({ module: entry.module, action: 'install', message })
        }
      }
      if (changed) local = (await installed()) ?? local
      for (const module of desired.modules) {
        const here = local.get(module.name)
        if (here === undefined) continue
        const wanted = new Map(module.sets.map((set) => [set.name, set.enabled]))
        const differing = here.sets.filter(
          (set) => wanted.has(set.name) && wanted.get(set.name) !== set.enabled,
        )
        if (differing.length === 0) continue
        const flags = new Set(
          here.sets.filter((set) => wanted.has(set.name)).map((set) => wanted.get(set.name)),
        )
        // One flag for every set: the module at once, all or nothing, as Node-RED does it.
        const calls =
          flags.size === 1
            ? [{ path: modulePath(module.name), enabled: [...flags][0] }]
            : differing.map((set) => ({
                path: `${modulePath(module.name)}/${encodeURIComponent(set.name)}`,
                enabled: wanted.get(set.name),
              }))
        for (const change of calls) {
          const answer = await call('PUT', change.path, { enabled: change.enabled })
          if (answer?.status !== 200) {
            failures.push({
              module: module.name,
              action: change.enabled ? 'enable' : 'disable',
              message: messageOf(answer),
            })
            break
          }
        }
      }
      return failures
    },

    /** What this instance has, for flowadmin; null when Node-RED could not be asked. */
    async report(applied, failures) {
      const [nodes, flows, settings] = [
        await installed(),
        await call('GET', '/flows'),
        await call('GET', '/settings'),
      ]
      if (nodes === null || flows?.status !== 200) return null
      return {
        nodeRedVersion: short(settings?.body?.version ?? 'unknown').slice(0, 64),
        modules: [...nodes.values()],
        typesInUse: typesOf(flows.body),
        applied,
        failures,
      }
    },
  }
}

/** Whether a desired state has what apply reads: modules, installs and removals as lists. */
const isDesired = (body) =>
  body !== null &&
  typeof body === 'object' &&
  typeof body.version === 'string' &&
  Array.isArray(body.modules) &&
  Array.isArray(body.installs) &&
  Array.isArray(body.removals)

module.exports = { adminAddressOf, createLocalAdmin, isDesired, isLocalPeer, modulesOf, typesOf }
