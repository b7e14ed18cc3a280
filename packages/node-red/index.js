'use strict'

const { createAdminAuth } = require('./lib/admin-auth')
const { createAuditLogger } = require('./lib/audit')
const { startFleetAgent } = require('./lib/fleet')
const { createMiddleware } = require('./lib/middleware')
const { nodeRedSettingsOf, settledUserDir, watchSettings } = require('./lib/node-red-settings')
const { parseOptions } = require('./lib/options')
const { stateOf } = require('./lib/state')

/** How long the logouts' userDir is looked for (Node-RED listens well within it). */
const USER_DIR_LOOK_MS = 60_000
/** How often the credential's userDir is looked for until Node-RED listens. */
const CREDENTIAL_LOOK_MS = 250

/**
 * This instance's own credential is looked for in Node-RED's userDir once Node-RED listens (or it
 * enrols, with its enrolment token). Looked for until found when the instance needs it (no shared
 * secret, or fleet mode), else as long as the logouts' userDir.
 */
function findCredential(settings, state, auth) {
  const userDirOf = () => {
    const nodeRed = nodeRedSettingsOf(auth)
    return nodeRed === null || nodeRed.serverPort === undefined ? null : settledUserDir(nodeRed)
  }
  const needed = settings.clientId === null || settings.enrolmentToken !== null || settings.fleet
  state.credentials.start(userDirOf, CREDENTIAL_LOOK_MS, needed ? null : USER_DIR_LOOK_MS)
}

/**
 * The logouts waiting for flowadmin are kept in Node-RED's userDir once it is known (and those of
 * before a restart taken back): looked for from the next turn on, and again at a request, which
 * Node-RED serves only once it listens, when the userDir is settled.
 */
function keepLogoutsInUserDir(state, auth) {
  let found = null
  let kept = false
  const keep = (settings) => {
    const userDir = settledUserDir(settings)
    if (kept || userDir === null) return false
    kept = true
    state.revocations.keepIn(userDir)
    return true
  }
  watchSettings(
    auth,
    (settings) => {
      found = settings
      return settledUserDir(settings) !== null
    },
    keep,
    USER_DIR_LOOK_MS,
  )
  state.restoreLogouts = () => {
    if (!kept && found !== null) keep(found)
  }
}

/**
 * Node-RED's `adminAuth` setting: logins and tokens checked at flowadmin. Throws on bad options,
 * so Node-RED stops at start with the message.
 * @param {object} options
 */
function adminAuth(options) {
  const settings = parseOptions(options)
  const state = stateOf(options, settings)
  const auth = createAdminAuth(settings, state)
  if (state.adminAuth === null) {
    state.adminAuth = auth
    keepLogoutsInUserDir(state, auth)
    findCredential(settings, state, auth)
  }
  // Fleet mode: the agent starts once Node-RED listens, and finds its settings by this object.
  if (settings.fleet && state.fleet === null) state.fleet = startFleetAgent(settings, auth, state)
  return auth
}

/**
 * Node-RED's `httpAdminMiddleware` setting: runs `options.middleware`, then forwards the editor's
 * logout to flowadmin. Give it the same options object as adminAuth.
 * @param {object} options
 */
function httpAdminMiddleware(options) {
  const settings = parseOptions(options)
  return createMiddleware(settings, stateOf(options, settings))
}

/**
 * A Node-RED custom logger for `logging: { flowadmin: auditLogger(options) }`: the instance's audit
 * events go to flowadmin's trail. Give it the same options object as adminAuth, with `audit` for
 * its own options. Throws on bad options, so Node-RED stops at start with the message.
 * @param {object} options
 */
function auditLogger(options) {
  const settings = parseOptions(options)
  return createAuditLogger(settings, stateOf(options, settings), options.audit)
}

module.exports = { adminAuth, auditLogger, httpAdminMiddleware }
