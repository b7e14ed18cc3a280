'use strict'

// Fleet mode: this instance pulls flowadmin's desired node modules (a long poll, outbound only),
// applies them through its own Node-RED's admin API over loopback, and reports what it has. It
// never throws into Node-RED, and while flowadmin cannot be reached it changes nothing.

const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')
const { basicAuthorization } = require('./client')
const { request } = require('./http')
const { adminAddressOf, createLocalAdmin, isDesired } = require('./local-admin')

/** Seconds flowadmin may hold a poll. */
const POLL_WAIT_S = 25
/** The longest pause between attempts while flowadmin cannot be reached. */
const MAX_BACKOFF_MS = 30_000
/** How often the agent looks for Node-RED's settings until Node-RED listens. */
const SETTINGS_LOOK_MS = 250
/** After this long without Node-RED's settings, the log says so (once). */
const SETTINGS_NOTICE_MS = 30_000
/** The file in the userDir that keeps this instance's id. */
const ID_FILE = '.flowadmin-instance'
// ESC [ … letter: a terminal's colour or cursor code (written from its code point, not as a literal).
const COLOUR_CODE = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*[A-Za-z]`, 'g')

/**
 * A report's text as flowadmin takes it: npm's and Node-RED's messages may carry colour codes,
 * tabs or other control characters, which flowadmin refuses (400, the whole report). They become
 * spaces, colour codes go, and a lone surrogate becomes U+FFFD. A JSON.stringify replacer.
 */
function cleanText(_key, value) {
  if (typeof value !== 'string') return value
  return value
    .replace(COLOUR_CODE, '')
    .replace(/[\p{Cc}]/gu, ' ')
    .toWellFormed()
}

/** The permissions of the agent's own token on this instance: what applying and reporting need. */
const AGENT_PERMISSIONS = ['nodes.read', 'nodes.write', 'flows.read', 'settings.read']
const AGENT_USER = '@flowadmin/fleet'

const sleep = (ms) =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms)
    timer.unref?.()
  })
const sha256 = (text) => crypto.createHash('sha256').update(text).digest()
const firstLine = (text) =>
  String(text ?? '')
    .split('\n')
    .find((line) => line.trim() !== '') ?? ''
const short = (text) => firstLine(text).trim().slice(0, 1000)

/**
 * This instance's id: the option, else the one kept in `<userDir>/.flowadmin-instance` (created
 * on first start). Null when neither can be had (the folder is read-only): the agent then stops.
 */
function instanceIdOf(settings, userDir, log) {
  if (settings.instanceId !== null) return settings.instanceId
  const file = path.join(userDir, ID_FILE)
  try {
    const kept = fs.readFileSync(file, 'utf8').trim()
    if (/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(kept)) return kept
  } catch {
    // Not there yet.
  }
  const id = `${
    os
      .hostname()
      .replace(/[^A-Za-z0-9._-]/g, '')
      .slice(0, 40) || 'node-red'
  }-${crypto.randomBytes(6).toString('hex')}`
  try {
    fs.writeFileSync(file, `${id}\n`, { flag: 'wx' })
    return id
  } catch {
    try {
      // Another start wrote it first.
      const kept = fs.readFileSync(file, 'utf8').trim()
      if (kept !== '') return kept
    } catch {
      // Fall through.
    }
    log(`fleet: cannot keep an instance id in ${file}: set the instanceId option; fleet mode is off`)
    return null
  }
}

/**
 * Node-RED's settings object, as its launcher loaded it and completes it (`serverPort` once it
 * listens): the settings file's module, whose adminAuth is `adminAuth`. The runtime's read-only
 * copy of the settings is another module, and lacks what is set after start.
 */
function nodeRedSettingsOf(adminAuth) {
  for (const cached of Object.values(require.cache)) {
    const exported = cached?.exports
    if (exported === null || typeof exported !== 'object' || exported.adminAuth !== adminAuth) continue
    if (
      typeof exported.settingsFile === 'string' &&
      path.resolve(exported.settingsFile) === cached.filename
    ) {
      return exported
    }
  }
  return null
}

/**
 * Starts the agent once Node-RED listens. `state` is shared with adminAuth: the agent's own token
 * is accepted there (see isAgentToken).
 *
 * @param {import('./options').Settings} settings
 * @param {object} adminAuth the object Node-RED's settings hold, to find those settings by
 */
function startFleetAgent(settings, adminAuth) {
  const { log, url } = settings
  const token = crypto.randomBytes(32).toString('base64url')
  const tokenDigest = sha256(token)
  const authorization = basicAuthorization(settings.clientId, settings.clientSecret)
  let stopped = false
  let unreachable = false

  /** flowadmin answered or not: one line per change. */
  const reachable = (ok, why) => {
    if (ok && unreachable) log(`fleet: flowadmin at ${url} answers again`)
    if (!ok && !unreachable) {
      log(
        `fleet: flowadmin at ${url} cannot be reached (${why}): this instance keeps its modules as they are`,
      )
    }
    unreachable = !ok
  }

  async function call(method, pathname, options) {
    const answer = await request(`${url}${pathname}`, {
      method,
      headers: { Authorization: authorization, Accept: 'application/json', ...options.headers },
      body: options.body,
      timeoutMs: options.timeoutMs,
    })
    if (answer.status === 0) {
      reachable(false, answer.failure === 'timeout' ? 'no answer in time' : answer.reason)
      return null
    }
    let body = null
    try {
      body = answer.text === '' ? null : JSON.parse(answer.text)
    } catch {
      // Not JSON: only the status counts.
    }
    reachable(answer.status < 500, `HTTP ${answer.status}`)
    const etag = answer.headers.etag
    return { status: answer.status, body, etag: typeof etag === 'string' ? etag : null }
  }

  async function run() {
    let nodeRed = null
    const looking = Date.now()
    let noticed = false
    while (!stopped) {
      nodeRed = nodeRedSettingsOf(adminAuth)
      if (nodeRed !== null && nodeRed.serverPort !== undefined) break
      if (!noticed && Date.now() - looking >= SETTINGS_NOTICE_MS) {
        noticed = true
        log(
          "fleet: Node-RED's settings file (with this adminAuth and its settingsFile) is not found, or Node-RED does not listen yet: " +
            'fleet mode waits (it needs Node-RED started from a settings file, and one adminAuth(options) per options)',
        )
      }
      await sleep(SETTINGS_LOOK_MS)
    }
    if (stopped || nodeRed === null) return
    if (nodeRed.httpAdminRoot === false) {
      log(
        'fleet: httpAdminRoot is false, so there is no admin API to apply changes through; fleet mode is off',
      )
      return
    }
    const where = await adminAddressOf(nodeRed.uiHost)
    if (where.address === undefined) {
      log(`fleet: ${where.refused}: the agent calls its own Node-RED on this machine only; fleet mode is off`)
      return
    }
    if (stopped) return
    const userDir =
      typeof nodeRed.userDir === 'string' ? nodeRed.userDir : path.join(os.homedir(), '.node-red')
    const id = instanceIdOf(settings, userDir, log)
    if (id === null) return
    const local = createLocalAdmin(
      {
        uiHost: where.address,
        serverPort: nodeRed.serverPort,
        httpAdminRoot: nodeRed.httpAdminRoot,
        https: nodeRed.https,
      },
      token,
    )
    const base = `/fleet/instances/${encodeURIComponent(id)}`
    let desired = null
    let etag = null
    let applied = null
    let failures = []
    /** Installs that failed for the desired version: not tried again until it changes. */
    let failedInstalls = new Map()
    let backoff = 1000
    // A refusal is logged once, not at every pause; again after the call succeeded in between.
    const onceEach = () => {
      let last = null
      return {
        say(line) {
          if (line !== last) log(line)
          last = line
        },
        clear() {
          last = null
        },
      }
    }
    const pollRefusal = onceEach()
    const reportRefusal = onceEach()
    const failure = onceEach()
    const pause = async () => {
      await sleep(backoff)
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS)
    }

    async function once() {
      const answer = await call('GET', `${base}/desired`, {
        headers: { ...(etag && { 'If-None-Match': etag }), Prefer: `wait=${POLL_WAIT_S}` },
        timeoutMs: (POLL_WAIT_S + 15) * 1000,
      })
      if (answer === null || (answer.status !== 200 && answer.status !== 304)) {
        if (answer !== null) {
          pollRefusal.say(
            `fleet: flowadmin answered HTTP ${answer.status} to the poll${answer.body?.message ? `: ${short(answer.body.message)}` : ''}`,
          )
        }
        await pause()
        return
      }
      pollRefusal.clear()
      if (answer.status === 200 && !isDesired(answer.body)) {
        failure.say(
          'fleet: flowadmin answered the poll with no desired state (version, modules, installs and removals as lists): nothing applied; tried again',
        )
        await pause()
        return
      }
      backoff = 1000
      if (answer.status === 200) {
        if (desired?.version !== answer.body.version) failedInstalls = new Map()
        desired = answer.body
        etag = answer.etag
      }
      if (desired !== null) {
        const outcome = await local.apply(desired, failedInstalls)
        if (outcome !== null) {
          failures = outcome
          applied = desired.version
        }
      }
      const report = await local.report(applied, failures)
      if (report === null) return
      const sent = await call('POST', `${base}/report`, {
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify(report, cleanText),
        timeoutMs: settings.timeoutMs * 3,
      })
      if (sent !== null && sent.status === 204) reportRefusal.clear()
      if (sent !== null && sent.status !== 204) {
        reportRefusal.say(
          `fleet: flowadmin refused the report (HTTP ${sent.status})${sent.body?.message ? `: ${short(sent.body.message)}` : ''}`,
        )
        await pause()
        return
      }
      failure.clear()
    }

    while (!stopped) {
      try {
        await once()
      } catch (error) {
        failure.say(`fleet: ${short(error?.message ?? error)}: nothing more applied this time; tried again`)
        await pause()
      }
    }
  }

  /** Settles (never rejects) once the agent has stopped. */
  const finished = new Promise((resolve) => {
    setImmediate(() => {
      run()
        .catch((error) => log(`fleet: stopped unexpectedly (${short(error?.message ?? error)})`))
        .finally(resolve)
    })
  })

  return {
    /** Whether `candidate` is the agent's own token (compared in constant time). */
    isAgentToken(candidate) {
      return typeof candidate === 'string' && crypto.timingSafeEqual(sha256(candidate), tokenDigest)
    },
    /** The user the agent's token stands for. */
    agentUser: () => ({ username: AGENT_USER, permissions: [...AGENT_PERMISSIONS] }),
    /** Stops the agent after its current call; settles once it has stopped, never rejects. */
    stop() {
      stopped = true
      return finished
    },
  }
}

module.exports = {
  cleanText,
  startFleetAgent,
  AGENT_PERMISSIONS,
}
