'use strict'

const { createTokenCache } = require('./cache')
const { createClient } = require('./client')
const { createHealth } = require('./health')

/**
 * @typedef {object} State
 * @property {ReturnType<typeof createClient>} client
 * @property {ReturnType<typeof createTokenCache>} cache
 */

/** One state per options object: see stateOf. */
const states = new WeakMap()

/**
 * The client, token cache and outage state of one options object. `adminAuth(options)` and
 * `httpAdminMiddleware(options)` given the same object share them: the editor's logout drops the
 * token from the cache at once, and an outage is logged once, not once per export.
 *
 * @param {object} options what the caller passed
 * @param {import('./options').Settings} settings the options checked
 * @returns {State}
 */
function stateOf(options, settings) {
  let state = states.get(options)
  if (state === undefined) {
    const health = createHealth(settings.log)
    state = { client: createClient(settings, health), cache: createTokenCache(settings) }
    states.set(options, state)
  }
  return state
}

module.exports = { stateOf }
