'use strict'

const { createAdminAuth } = require('./lib/admin-auth')
const { createAuditLogger } = require('./lib/audit')
const { startFleetAgent } = require('./lib/fleet')
const { createMiddleware } = require('./lib/middleware')
const { parseOptions } = require('./lib/options')
const { stateOf } = require('./lib/state')

/**
 * Node-RED's `adminAuth` setting: logins and tokens checked at flowadmin. Throws on bad options,
 * so Node-RED stops at start with the message.
 * @param {object} options
 */
function adminAuth(options) {
  const settings = parseOptions(options)
  const state = stateOf(options, settings)
  const auth = createAdminAuth(settings, state)
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
