'use strict'

const { createTokenCache } = require('./cache')
const { createClient } = require('./client')
const { createCredentials } = require('./credentials')
const { createHealth } = require('./health')
const { createIdentity } = require('./identity')
const { createNodeRedEvents } = require('./node-red-events')
const { createRevocations } = require('./revocations')

/**
 * @typedef {object} State
 * @property {ReturnType<typeof createCredentials>} credentials which credential the calls to
 *   flowadmin carry: this instance's own, or the shared one
 * @property {ReturnType<typeof createClient>} client
 * @property {ReturnType<typeof createTokenCache>} cache
 * @property {ReturnType<typeof createRevocations>} revocations
 * @property {ReturnType<typeof import('./fleet').startFleetAgent> | null} fleet the fleet agent, once started
 * @property {ReturnType<typeof createIdentity>} identity this instance's fleet id, once known
 * @property {ReturnType<typeof createNodeRedEvents>} nodeRedEvents Node-RED's module and deploy
 *   events, as the audit logger sees them
 * @property {{invalidToken(token: string): void} | null} trail the audit logger's, once Node-RED
 *   asked it for its handler: the helper's own events for the trail
 * @property {object | null} adminAuth the adminAuth object made first for these options
 * @property {() => void} restoreLogouts takes back the logouts kept before a restart, when the
 *   userDir is known and they are not yet (called before a token is judged)
 */

/** One state per options object: see stateOf. */
const states = new WeakMap()

/**
 * The client, token cache, logouts and outage state of one options object. `adminAuth(options)`,
 * `httpAdminMiddleware(options)` and `auditLogger(options)` given the same object share them: the
 * editor's logout drops the token from the cache and refuses it at once, an outage is logged once,
 * not once per export, and the audit logger files events under the fleet's name for this instance.
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
    const credentials = createCredentials(settings)
    const client = createClient(settings, health, credentials)
    const revocations = createRevocations(settings, client)
    state = {
      credentials,
      client,
      cache: createTokenCache(settings),
      revocations,
      fleet: null,
      identity: createIdentity(),
      nodeRedEvents: createNodeRedEvents(),
      trail: null,
      adminAuth: null,
      restoreLogouts: () => {},
    }
    states.set(options, state)
  }
  return state
}

module.exports = { stateOf }
