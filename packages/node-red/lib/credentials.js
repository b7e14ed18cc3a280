'use strict'

const path = require('node:path')
const { retryAfterMs } = require('./audit-forwarder')
const { basicAuthorization } = require('./client')
const { machineOf, readCredential, writeCredential, CREDENTIAL_FILE } = require('./credential-file')
const { enrol, refusedWait, rotate } = require('./enrolment')
const { nodeRedVersionOf } = require('./node-red-settings')
const { backoff, createStopper, onceEach } = require('./timing')

// Which credential this instance's calls to flowadmin carry (HTTP Basic): its own, kept in the
// userDir, once it has one; else the resource server's shared clientId and clientSecret from the
// options; else none yet (it enrols with its enrolment token, and is refused meanwhile). Its own
// wins over the shared one. Every call (logins, introspection, the trail, the fleet's poll,
// report and lease, the exit flushes) asks here for the header at the moment it is sent, so a
// rotation takes effect at once.

/**
 * The instance an instance's own client id names (`<resource server>/<instance>`, as flowadmin
 * makes them at enrolment); null for a resource server's id, which has no `/`.
 *
 * @param {string} clientId
 */
function instanceOfClientId(clientId) {
  const slash = clientId.indexOf('/')
  return slash > 0 && slash < clientId.length - 1 ? clientId.slice(slash + 1) : null
}

/**
 * @param {import('./options').Settings} settings
 */
function createCredentials(settings) {
  const { url, log } = settings
  const shared =
    settings.clientId === null
      ? null
      : {
          clientId: settings.clientId,
          authorization: basicAuthorization(settings.clientId, settings.clientSecret ?? ''),
        }
  /** The credential of its own, as the file keeps it, and its header. */
  let own = null
  let userDir = null
  let settled = false
  let refused = false
  let started = false
  /** Whether a rotation runs. */
  let rotating = false
  const stopper = createStopper()
  const listeners = new Set()
  let markSettled = () => {}
  const whenSettled = new Promise((resolve) => {
    markSettled = resolve
  })

  function adopt(credential) {
    own = { credential, authorization: basicAuthorization(credential.clientId, credential.clientSecret) }
    refused = false
    for (const listener of listeners) {
      try {
        listener()
      } catch {
        // A listener's trouble is its own.
      }
    }
  }

  function settle() {
    if (settled) return
    settled = true
    markSettled()
  }

  /** Enrols with the token until flowadmin gives a credential, or the helper stops. */
  async function enrolNow(dir) {
    const say = onceEach(log)
    let failures = 0
    let refusals = 0
    const nodeRedVersion = nodeRedVersionOf()
    while (!stopper.stopped) {
      const answer = await enrol({
        url,
        token: settings.enrolmentToken,
        instanceId: settings.instanceId,
        nodeRedVersion,
        timeoutMs: settings.timeoutMs * 3,
        signal: stopper.signal,
      })
      if (stopper.stopped) return
      if (answer.outcome === 'enrolled') {
        const credential = {
          url,
          instance: answer.instance,
          resourceServer: answer.resourceServer,
          clientId: answer.clientId,
          clientSecret: answer.clientSecret,
          machine: machineOf(),
        }
        const failure = writeCredential(dir, credential)
        log(
          failure === null
            ? `enrolment: this instance is enrolled at flowadmin at ${url} as ${JSON.stringify(answer.instance)}; its credential is kept in ${path.join(dir, CREDENTIAL_FILE)} and the enrolment token is no longer needed`
            : `enrolment: this instance is enrolled at flowadmin at ${url} as ${JSON.stringify(answer.instance)}, but its credential cannot be kept in ${path.join(dir, CREDENTIAL_FILE)} (${failure}): it is used until Node-RED stops, then a new enrolment token is needed`,
        )
        adopt(credential)
        return
      }
      say.say(answer.line)
      let wait
      if (answer.outcome === 'refused') {
        refusals += 1
        wait = retryAfterMs(answer.retryAfter) ?? refusedWait(refusals)
      } else {
        failures += 1
        wait = backoff(failures)
      }
      await stopper.sleep(wait)
    }
  }

  /** Finds the credential in the userDir, or enrols; then settles. */
  async function find(dir) {
    userDir = dir
    const found = readCredential(dir, url, machineOf())
    if (found.credential !== undefined) {
      adopt(found.credential)
      return
    }
    const token = settings.enrolmentToken
    if (found.unusable !== undefined) {
      log(
        `enrolment: ${found.unusable}; it is not used: ${token !== null ? 'this instance enrols with its enrolment token' : shared !== null ? 'the shared clientId and clientSecret are used (enrol this instance: give it an enrolment token)' : 'enrol this instance: give it an enrolment token (enrolmentToken or FLOWADMIN_ENROLMENT_TOKEN)'}`,
      )
    }
    if (token !== null) {
      await enrolNow(dir)
      return
    }
    if (shared === null && found.absent !== undefined) {
      log(
        `enrolment: this instance has no credential in ${path.join(dir, CREDENTIAL_FILE)} and no enrolment token: ` +
          'give it one (the enrolmentToken option or FLOWADMIN_ENROLMENT_TOKEN), or clientId and clientSecret; every login is refused until then',
      )
    }
  }

  return {
    /** The `Authorization` header of a call to flowadmin now; null while it has none (not enrolled). */
    authorization: () => own?.authorization ?? shared?.authorization ?? null,
    /** The client id its calls name (a login's `client_id`); null while it has none. */
    clientId: () => own?.credential.clientId ?? shared?.clientId ?? null,
    /**
     * The instance id of its own credential: the one it enrolled for, or the one its clientId
     * names when an instance's credential is given as clientId and clientSecret
     * (`<resource server>/<instance>`); null with a resource server's shared secret or none.
     */
    get instance() {
      return own?.credential.instance ?? (shared === null ? null : instanceOfClientId(shared.clientId))
    },
    /** Whether its calls carry a credential of its own. */
    get own() {
      return own !== null
    },
    /** Whether it is known which credential it uses (its own, the shared one, or none). */
    get settled() {
      return settled
    },
    /** Resolves once settled, or stopped; never rejects. */
    ready: () => whenSettled,
    /** `listener()` whenever it takes a credential of its own (found, enrolled, rotated). */
    onChange(listener) {
      listeners.add(listener)
    },

    /**
     * Looks for the userDir's credential, or enrols, once Node-RED's userDir is known: `userDirOf`
     * is asked again until it gives one (`lookMs`), and given up after `giveUpMs` (null: never).
     * Once per credentials; never throws.
     * @param {() => string | null} userDirOf
     */
    start(userDirOf, lookMs, giveUpMs) {
      if (started) return
      started = true
      const begun = Date.now()
      const look = async () => {
        while (!stopper.stopped) {
          let dir = null
          try {
            dir = userDirOf()
          } catch {
            // Looked for again.
          }
          if (dir !== null) {
            await find(dir)
            return
          }
          if (giveUpMs !== null && Date.now() - begun >= giveUpMs) return
          await stopper.sleep(lookMs)
        }
      }
      setImmediate(() => {
        look()
          .catch((error) =>
            log(`enrolment: failed unexpectedly (${String(error?.message ?? error).split('\n')[0]})`),
          )
          .finally(settle)
      })
    },

    /**
     * flowadmin refused a call's credential (401 invalid_client). With a credential of its own
     * that means it is revoked (or unknown): said once, until it is accepted again. False with the
     * shared one: the caller tells that as before.
     */
    rejected() {
      if (own === null) return false
      if (!refused) {
        refused = true
        log(
          `this instance's credential was revoked or is unknown at flowadmin at ${url}: enrol it again (see the README); logins are refused until then`,
        )
      }
      return true
    },
    /** flowadmin accepted a call's credential. */
    accepted() {
      if (own === null || !refused) return
      refused = false
      log(`flowadmin at ${url} accepts this instance's credential again`)
    },

    /**
     * flowadmin asks for a new credential (a poll's desired state says `rotate`): asked for with
     * the current one, written to the file first, then used (flowadmin ends the old one at its
     * first use). One at a time; retried with back-off until it succeeds. Never rejects.
     */
    async rotate() {
      if (own === null || rotating || userDir === null) return
      rotating = true
      const say = onceEach(log)
      let failures = 0
      try {
        while (!stopper.stopped) {
          const answer = await rotate({
            url,
            instance: own.credential.instance,
            authorization: own.authorization,
            timeoutMs: settings.timeoutMs * 3,
            signal: stopper.signal,
          })
          if (stopper.stopped) return
          if (answer.outcome === 'rotated') {
            const next = { ...own.credential, clientId: answer.clientId, clientSecret: answer.clientSecret }
            const failure = writeCredential(userDir, next)
            if (failure === null) {
              adopt(next)
              log(
                `this instance's credential at flowadmin at ${url} is rotated: the new one is kept in ${path.join(userDir, CREDENTIAL_FILE)}`,
              )
              return
            }
            say.say(
              `the rotated credential cannot be kept in ${path.join(userDir, CREDENTIAL_FILE)} (${failure}): this instance keeps the one it has; tried again`,
            )
          } else say.say(answer.line)
          failures += 1
          await stopper.sleep(backoff(failures))
        }
      } finally {
        rotating = false
      }
    },

    /** Stops enrolling and rotating: their calls are aborted. */
    stop() {
      stopper.stop()
    },
  }
}

module.exports = { createCredentials }
