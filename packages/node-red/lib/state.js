'use strict'

const { createTokenCache } = require('./cache')
const { createClient } = require('./client')
const { createHealth } = require('./health')
const { createRevocations } = require('./revocations')

/**
 * @typedef {object} State
 * @property {ReturnType<typeof createClient>} client
 * @property {ReturnType<typeof createTokenCache>} cache
 * @property {ReturnType<typeof createRevocations>} revocations
 * @property {ReturnType<typeof import('./fleet').startFleetAgent> | null} fleet the fleet agent, once started
 */

/** One state per options object: see stateOf. */
const states = new WeakMap()

/**
 * The client, token cache, logouts and outage state of one options object. `adminAuth(options)`
 * and `httpAdminMiddleware(options)` given the same object share them: the editor's logout drops
 * the token from the cache and refuses it at once, and an outage is logged once, not once per
 * export.
 *
 * @param {object} options what the caller passed
 * @param {import('./options').Settings} settings the options checked
 * @returns {State}
 */
function stateOf(options, settings) {
  let state = states.get(options)
  if (state === undefined) {
    // flowadmin answering again starts the revocations that wait for it.
    const health = createHealth(settings.log, () => revocations.recovered())
    const client = createClient(settings, health)
    const revocations = createRevocations(settings, client)
    state = { client, cache: createTokenCache(settings), revocations, fleet: null }
    states.set(options, state)
  }
  return state
}

module.exports = { stateOf }
