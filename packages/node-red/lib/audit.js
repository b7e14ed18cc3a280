'use strict'

const os = require('node:os')
const { flushAtExit } = require('./audit-exit')
const { SECRET_KEY } = require('./audit-events')
const { createForwarder } = require('./audit-forwarder')
const { isInstanceName, parseAuditOptions } = require('./audit-options')

// Node-RED's custom logger for its audit events (audit-forwarder.js sends them to flowadmin's
// trail), and the name they are filed under.

/** How long events wait for this instance's fleet id before they go under the host name. */
const NAME_WAIT_MS = 30_000

/** The host name as a trail name (printable, without "/"). */
function hostName() {
  const name = os
    .hostname()
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it replaces.
    .replace(/[\u0000-\u001f\u007f/]/g, '-')
    .slice(0, 128)
  return isInstanceName(name) ? name : 'node-red'
}

/**
 * The name events are filed under. In fleet mode the fleet's id for this instance (the agent's,
 * the one `GET /fleet/instances` lists), unless `audit.instance` names another (said once); while
 * the id is not known, events wait, at most 30 s, then go under the host name until it is.
 * Without fleet mode, `audit.instance` or the host name.
 *
 * @param {import('./options').Settings} settings
 * @param {import('./audit-options').AuditSettings} audit
 * @param {import('./state').State} state
 * @param {() => void} known called when the name becomes known
 */
function createNaming(settings, audit, state, known) {
  const fallback = audit.instance ?? hostName()
  const { credentials } = state
  let waited = !settings.fleet || audit.instance !== null
  let told = false
  // A credential of its own names the instance: flowadmin takes its events under that id only.
  credentials.onChange(() => {
    const own = credentials.instance
    if (!told && audit.instance !== null && own !== null && own !== audit.instance) {
      told = true
      settings.log(
        `audit.instance ${JSON.stringify(audit.instance)} is not this instance's enrolled id ${JSON.stringify(own)}: its Node-RED events are filed under ${JSON.stringify(own)}`,
      )
    }
    known()
  })
  state.identity.onSettled((id) => {
    if (audit.instance !== null && id !== null && id !== audit.instance) {
      settings.log(
        `audit.instance ${JSON.stringify(audit.instance)} is not this instance's fleet id ${JSON.stringify(id)}: its Node-RED events are filed under ${JSON.stringify(audit.instance)}, which the fleet does not list; leave audit.instance out to use the fleet id`,
      )
    }
    known()
  })
  if (!waited) {
    const timer = setTimeout(() => {
      waited = true
      if (state.identity.id === null) {
        settings.log(
          `audit: this instance's fleet id is not known yet (Node-RED's settings not found, or not listening): its events go under the host name ${JSON.stringify(fallback)} until it is`,
        )
      }
      known()
    }, NAME_WAIT_MS)
    timer.unref?.()
  }
  return {
    now() {
      if (credentials.instance !== null) return credentials.instance
      // Without the shared secret, events wait for the credential (and its id).
      if (settings.clientId === null) return null
      if (audit.instance !== null || !settings.fleet) return fallback
      if (state.identity.id !== null) return state.identity.id
      return waited || state.identity.settled ? fallback : null
    },
    atExit: () =>
      credentials.instance ??
      (audit.instance !== null || !settings.fleet ? fallback : (state.identity.id ?? fallback)),
  }
}

/**
 * Node-RED's custom logger (`logging: { flowadmin: auditLogger(options) }`): audit messages only
 * (`level: 'off'` leaves every other message to the console logger), forwarded to flowadmin.
 * Node-RED's module and deploy events also go to the fleet agent of the same options object.
 *
 * @param {import('./options').Settings} settings
 * @param {import('./state').State} state
 * @param {unknown} options `options.audit`
 */
function createAuditLogger(settings, state, options) {
  const audit = parseAuditOptions(options)
  let forwarder = null
  return {
    level: 'off',
    audit: true,
    handler() {
      if (forwarder === null) {
        const naming = createNaming(settings, audit, state, () => forwarder?.flush())
        forwarder = createForwarder(settings, audit, naming, state.credentials)
        state.trail = forwarder
        flushAtExit(forwarder, audit, settings)
      }
      const own = forwarder
      return (msg) => {
        state.nodeRedEvents.take(msg)
        own.take(msg)
      }
    },
    /** The forwarder behind the handler (tests), null before Node-RED asked for the handler. */
    get forwarder() {
      return forwarder
    },
  }
}

module.exports = { createAuditLogger, parseAuditOptions, SECRET_KEY }
