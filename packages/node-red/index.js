'use strict'

const { createAdminAuth } = require('./lib/admin-auth')
const { createAuditLogger } = require('./lib/audit')
const { startFleetAgent } = require('./lib/fleet')
const { createMiddleware } = require('./lib/middleware')
const { settledUserDir, watchSettings } = require('./lib/node-red-settings')
const { parseOptions } = require('./lib/options')
const { stateOf } = require('./lib/state')

/** How long the logouts' userDir is looked for (Node-RED listens well within it). */
const USER_DIR_LOOK_MS = 60_000

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
