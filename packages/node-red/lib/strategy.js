'use strict'

const { createHash, randomBytes } = require('node:crypto')

// The editor's "Sign in with …" button, as a Passport strategy Node-RED runs at
// `<httpAdminRoot>/auth/strategy` and its callback. No dependency: a Passport strategy is an object
// with a `name` and `authenticate(req)`, which Passport gives `redirect`, `success` and `error`.

/** The strategy's name: Node-RED routes `passport.authenticate(name)` to it. */
const NAME = 'flowadmin'
/** Where the pending sign-ins of a browser are kept in Node-RED's sign-in session. */
const SESSION_KEY = 'flowadminSignIns'
/** Milliseconds a sign-in may take, from the button to the callback. */
const SIGN_IN_MS = 10 * 60_000
/** Sign-ins one browser may have pending at once (tabs); the oldest go first. */
const MAX_PENDING = 5

const secret = () => randomBytes(32).toString('base64url')
const challengeOf = (verifier) => createHash('sha256').update(verifier).digest('base64url')

/** A query parameter given once as a string, else undefined. */
function single(req, name) {
  const value = req.query?.[name]
  return typeof value === 'string' ? value : undefined
}

/**
 * The strategy class Node-RED instantiates (`new strategy(options, verify)`). It never calls
 * Node-RED's `verify`: that would have Node-RED issue a session of its own, which lives in
 * `.sessions.json` for a week whatever happens to the person at flowadmin. Instead the user it
 * hands Node-RED carries the flowadmin token as `tokens.accessToken`, which Node-RED's callback
 * gives the editor as it is; every request with it is then introspected at flowadmin (`tokens`).
 *
 * @param {import('./options').Settings} settings
 * @param {import('./state').State} shared
 * @param {(token: string, signal: AbortSignal) => Promise<object | null>} userOf the token's user now
 */
function createStrategyClass(settings, shared, userOf) {
  const { timeoutMs } = settings
  const sso = /** @type {import('./options').SsoSettings} */ (settings.sso)

  /** Starts a sign-in: the PKCE verifier and state kept in this browser's session, then to flowadmin. */
  function begin(strategy, session) {
    const now = Date.now()
    const pending = Object.entries(session[SESSION_KEY] ?? {}).filter(([, entry]) => entry.expiresAt > now)
    const state = secret()
    const verifier = secret()
    pending.push([state, { verifier, expiresAt: now + SIGN_IN_MS }])
    session[SESSION_KEY] = Object.fromEntries(pending.slice(-MAX_PENDING))
    // This instance's own client id once enrolled (a code is for the client that asked for it).
    const clientId = shared.credentials.clientId()
    if (clientId === null) {
      strategy.error(new Error('This instance is not enrolled at flowadmin yet: try again later'))
      return
    }
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: sso.redirectUri,
      code_challenge: challengeOf(verifier),
      code_challenge_method: 'S256',
      state,
    })
    strategy.redirect(`${sso.url}/auth/authorize?${query}`)
  }

  /** flowadmin sent the browser back: the code for a token, the token's user, or why not. */
  async function complete(strategy, req, session) {
    const state = single(req, 'state')
    const entries = session[SESSION_KEY] ?? {}
    const entry = state === undefined || !Object.hasOwn(entries, state) ? undefined : entries[state]
    if (entry !== undefined) {
      delete entries[state]
      session[SESSION_KEY] = entries
    }
    const refuse = (message) => strategy.error(new Error(message))
    if (entry === undefined || entry.expiresAt <= Date.now()) {
      return refuse(
        'This sign-in was not started in this browser, was already used, or took too long: sign in again',
      )
    }
    const error = single(req, 'error')
    if (error !== undefined) {
      return refuse(
        `flowadmin refused the sign-in: ${(single(req, 'error_description') ?? error).slice(0, 200)}`,
      )
    }
    const code = single(req, 'code')
    if (code === undefined || code === '') return refuse('flowadmin sent no code: sign in again')
    const signal = AbortSignal.timeout(timeoutMs)
    const redeemed = await shared.client.redeem(code, sso.redirectUri, entry.verifier, signal)
    if (redeemed.outcome === 'refused') return refuse(`flowadmin refused the sign-in: ${redeemed.reason}`)
    const user = redeemed.outcome === 'issued' ? await userOf(redeemed.token, signal) : null
    if (user === null)
      return refuse('flowadmin cannot be reached or did not confirm the sign-in: try again later')
    // Node-RED's callback sends the editor `?access_token=<tokens.accessToken>` and keeps nothing.
    strategy.success({ ...user, tokens: { accessToken: redeemed.token } })
  }

  function FlowadminStrategy() {
    this.name = NAME
  }

  /** Both routes: the button starts a sign-in, the callback (`code` or `error`) completes it. */
  FlowadminStrategy.prototype.authenticate = function authenticate(req) {
    const session = req.session
    if (session === null || typeof session !== 'object') {
      this.error(
        new Error(
          '@flowadmin/node-red: the sign-in needs the session Node-RED sets up for adminAuth.type "strategy"',
        ),
      )
      return
    }
    const callback = single(req, 'code') !== undefined || single(req, 'error') !== undefined
    if (!callback) {
      begin(this, session)
      return
    }
    complete(this, req, session).catch((error) => {
      settings.log(
        `the editor's sign-in failed unexpectedly (${String(error?.message ?? error).split('\n')[0]})`,
      )
      this.error(new Error('The sign-in failed: try again'))
    })
  }

  return FlowadminStrategy
}

module.exports = { createStrategyClass, NAME }
