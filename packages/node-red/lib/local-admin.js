'use strict'

// This instance's own admin API, called over loopback with the fleet agent's token: how the agent
// reads what Node-RED has and applies flowadmin's desired modules, as the editor's palette would.

const dns = require('node:dns')
const http = require('node:http')
const https = require('node:https')
const net = require('node:net')
const os = require('node:os')
const { randomBytes } = require('node:crypto')
const { fetchVetted } = require('./fleet-tarball')

/** How long a call may take; an install runs npm, which may take minutes. */
const CALL_TIMEOUT_MS = 30_000
const INSTALL_TIMEOUT_MS = 10 * 60_000
/** A deploy stops and starts every node of the flows. */
const DEPLOY_TIMEOUT_MS = 2 * 60_000
/** Node-RED's admin API version 2: flows as `{rev, flows}`. */
const V2 = { 'Node-RED-API-Version': 'v2' }

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

/**
 * The modules of GET /nodes (a list of node sets), without Node-RED's own: name, version,
 * `pendingVersion` when Node-RED has another version installed for its next start, and sets.
 */
function modulesOf(list) {
  const modules = new Map()
  for (const set of Array.isArray(list) ? list : []) {
    if (typeof set?.module !== 'string' || set.module === 'node-red' || typeof set.name !== 'string') continue
    let module = modules.get(set.module)
    if (module === undefined) {
      module = { name: set.module, version: String(set.version ?? ''), sets: [] }
      // Installed, and loaded at the next restart of Node-RED (an upgrade through its admin API).
      if (typeof set.pending_version === 'string' && set.pending_version !== '') {
        module.pendingVersion = set.pending_version
      }
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
 * Calls to this Node-RED's own admin API with the agent's token. Each resolves to `{status, body}`
 * (body parsed as JSON, else the text), or null when Node-RED did not answer; none rejects.
 *
 * @param {object} nodeRed Node-RED's settings object (serverPort, httpAdminRoot, https), with `uiHost`
 *   an address of this machine (see adminAddressOf); a name is never called
 * @param {string} token the agent's own token
 * @param {AbortSignal} [signal] ends every call (the agent stops)
 */
function createLocalAdmin(nodeRed, token, signal) {
  const base = adminBase(nodeRed)
  const transport = base.secure ? https : http

  /** `body` is sent as JSON, or as it is when it is `{bytes, type}` (a form). */
  function call(method, pathname, body, timeoutMs = CALL_TIMEOUT_MS, headers = {}) {
    return new Promise((resolve) => {
      if (signal?.aborted) return resolve(null)
      const raw = Buffer.isBuffer(body?.bytes)
      const payload = body === undefined ? null : raw ? body.bytes : Buffer.from(JSON.stringify(body))
      const type = raw ? body.type : 'application/json'
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
            ...headers,
            ...(payload && { 'Content-Type': type, 'Content-Length': payload.length }),
          },
          // Its own certificate, on its own address: whatever names it carries.
          rejectUnauthorized: false,
          timeout: timeoutMs,
          signal,
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

  // A package name is URL-safe as it is; Node-RED's routes match a scoped one's `@` unencoded.
  const modulePath = (name) => `/nodes/${name}`
  const done = (answer) => answer?.status === 200 || answer?.status === 204

  return {
    /** Its modules (GET /nodes) by name, or null. */
    async modules() {
      const answer = await call('GET', '/nodes')
      return answer?.status === 200
        ? new Map(modulesOf(answer.body).map((module) => [module.name, module]))
        : null
    },
    /** Its deployed flows (GET /flows: Node-RED's flow JSON, an array), or null. */
    async flows() {
      const answer = await call('GET', '/flows')
      return answer?.status === 200 && Array.isArray(answer.body) ? answer.body : null
    },
    /** Its deployed flows and their revision (GET /flows, API v2: `{rev, flows}`), or null. */
    async flowsWithRev() {
      const answer = await call('GET', '/flows', undefined, CALL_TIMEOUT_MS, V2)
      return answer?.status === 200 &&
        typeof answer.body?.rev === 'string' &&
        Array.isArray(answer.body.flows)
        ? { rev: answer.body.rev, flows: answer.body.flows }
        : null
    },
    /**
     * A full deploy of `flows` (POST /flows, API v2): `{rev}`, or `{message}` (Node-RED's refusal),
     * with `unanswered: true` when it did not answer (deployed or not).
     */
    async deploy(flows) {
      const answer = await call('POST', '/flows', { flows }, DEPLOY_TIMEOUT_MS, {
        ...V2,
        'Node-RED-Deployment-Type': 'full',
      })
      if (answer === null) return { unanswered: true, message: messageOf(answer) }
      return answer.status === 200 && typeof answer.body?.rev === 'string'
        ? { rev: answer.body.rev }
        : { message: messageOf(answer) }
    },
    /** The types its deployed flows use (GET /flows), or null. */
    async typesInUse() {
      const answer = await call('GET', '/flows')
      return answer?.status === 200 ? typesOf(answer.body) : null
    },
    /** Its Node-RED version (GET /settings), or null. */
    async nodeRedVersion() {
      const answer = await call('GET', '/settings')
      return answer?.status === 200 && typeof answer.body?.version === 'string'
        ? short(answer.body.version).slice(0, 64)
        : null
    },
    /** Each change resolves to null when done, else Node-RED's (or npm's) message, one line. */
    async remove(name) {
      const answer = await call('DELETE', modulePath(name), undefined, INSTALL_TIMEOUT_MS)
      return done(answer) ? null : messageOf(answer)
    },
    /** An install, or an upgrade of an installed module (Node-RED's own: it loads at its restart). */
    async install(name, version) {
      const request = { module: name, ...(version !== null && { version }) }
      const answer = await call('POST', '/nodes', request, INSTALL_TIMEOUT_MS)
      return done(answer) ? null : messageOf(answer)
    },
    /**
     * An install or upgrade of the exact tarball flowadmin vetted (`entry`: module, version,
     * integrity, tarball): downloaded and checked here, then uploaded to Node-RED, which installs
     * it with its npm. Nothing reaches Node-RED when the tarball is not the one vetted.
     */
    async installVetted(entry, fetchOptions = {}) {
      const fetched = await fetchVetted(entry, { signal, ...fetchOptions })
      if (fetched.bytes === undefined) return fetched.refused
      const file = `${entry.module.replace(/^@/, '').replace(/\//g, '-')}-${entry.version ?? 'vetted'}.tgz`
      const answer = await call('POST', '/nodes', formOf(fetched.bytes, file), INSTALL_TIMEOUT_MS)
      if (done(answer)) return null
      return uploadRefused(answer)
        ? 'Node-RED refused the upload of the tarball flowadmin vetted: its palette uploads are off (externalModules.palette.allowUpload or editorTheme.palette.upload is false); installs from flowadmin need them on'
        : messageOf(answer)
    },
    /** A whole module's sets (`set` null), or one set. */
    async setEnabled(name, set, enabled) {
      const where = set === null ? modulePath(name) : `${modulePath(name)}/${encodeURIComponent(set)}`
      const answer = await call('PUT', where, { enabled })
      return done(answer) ? null : messageOf(answer)
    },
  }
}

/** A multipart/form-data body with the file field `tarball`, as the palette editor uploads one. */
function formOf(bytes, file) {
  const boundary = `----flowadmin${randomBytes(12).toString('hex')}`
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="tarball"; filename="${file.replace(/["\r\n\\]/g, '_')}"\r\n` +
      'Content-Type: application/gzip\r\n\r\n',
  )
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`)
  return { bytes: Buffer.concat([head, bytes, tail]), type: `multipart/form-data; boundary=${boundary}` }
}

/**
 * Whether Node-RED's answer to an upload says its settings turn uploads off: the file is dropped
 * (editorTheme.palette.upload false, or no upload route with externalModules.palette.allowUpload
 * false), so the request names nothing (`invalid_request`), or the installer says it outright.
 */
const uploadRefused = (answer) =>
  answer?.status === 400 &&
  (answer.body?.code === 'invalid_request' || /upload disabled/i.test(String(answer.body?.message ?? '')))

/** Node-RED's message of a refusal, one line. */
const messageOf = (answer) =>
  answer === null
    ? 'Node-RED did not answer'
    : short(answer.body?.message ?? (typeof answer.body === 'string' ? answer.body : `HTTP ${answer.status}`))

/** Whether a desired state has what apply reads: modules, installs and removals as lists. */
const isDesired = (body) =>
  body !== null &&
  typeof body === 'object' &&
  typeof body.version === 'string' &&
  Array.isArray(body.modules) &&
  Array.isArray(body.installs) &&
  Array.isArray(body.removals)

module.exports = { adminAddressOf, createLocalAdmin, isDesired, isLocalPeer, modulesOf, typesOf }
