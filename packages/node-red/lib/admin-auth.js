'use strict'

const { MAX_TOKEN_LENGTH } = require('./client')
const { createStrategyClass, NAME } = require('./strategy')

/**
 * A username or password longer than this is refused without asking: far beyond any real one,
 * and it keeps the request well under flowadmin's body limit, whose 413 would read as a fault.
 */
const MAX_CREDENTIAL_LENGTH = 4096

/** A non-empty string of a sane length. */
function isCredential(value) {
  return typeof value === 'string' && value !== '' && value.length <= MAX_CREDENTIAL_LENGTH
}

/** A copy per request: Node-RED keeps the user object on the request and the editor's socket. */
function copyOf(user) {
  return {
    username: user.username,
    permissions: Array.isArray(user.permissions) ? [...user.permissions] : user.permissions,
  }
}

/**
 * Node-RED calls the hooks without a `.catch` in places (the login exchange, the editor's socket):
 * a rejection there is an unhandled rejection, which stops Node-RED. So no hook ever rejects; a
 * bug is logged and ends as "no user".
 */
function neverRejects(log, name, hook) {
  return async (...args) => {
    try {
      return await hook(...args)
    } catch (error) {
      const what = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
      log(`adminAuth.${name} failed unexpectedly (${what.split('\n')[0]}): refused`)
      return null
    }
  }
}

/**
 * The `adminAuth` object: Node-RED's login form checks the password at flowadmin and hands the
 * editor flowadmin's token; every request's bearer token is introspected at flowadmin.
 *
 * @param {import('./options').Settings} settings
 * @param {import('./state').State} state
 */
function createAdminAuth(settings, state) {
  const { client, cache, revocations } = state
  const { log, timeoutMs } = settings
  let sessionRefusalLogged = false

  /**
   * One introspection, bounded by timeoutMs; the user, or null (inactive, or flowadmin failed).
   * `inactive()` is called when flowadmin says the token is not active.
   */
  async function introspect(token, signal, keep, inactive = () => {}) {
    const answer = await client.introspect(token, signal)
    if (answer.outcome === 'inactive') inactive()
    if (answer.outcome !== 'active') return null
    keep(answer.user, answer.expiresAt)
    return answer.user
  }

  /** The token's user now, through the cache (a sign-in puts its new token there). */
  const userOf = async (token, signal, inactive) => {
    const user = await cache.share(token, (keep) => introspect(token, signal, keep, inactive))
    return user && copyOf(user)
  }

  const hooks = {
    /**
     * Always null. Node-RED asks for a user by name only for a session token it issued itself
     * (`Tokens.get` found it, in its bearer strategy and on the editor's socket); a flowadmin
     * token goes through `tokens` instead. Such sessions are either from before this instance
     * used flowadmin (`.sessions.json` keeps them for `sessionExpiryTime`, a week by default) or,
     * on Node-RED older than 3.0, issued in place of the flowadmin token its login ignores.
     * Answering a user here would let them in past flowadmin and its revocation, so they are
     * refused, and logged once.
     */
    users: neverRejects(log, 'users', async (username) => {
      if (!sessionRefusalLogged) {
        sessionRefusalLogged = true
        log(
          `refused a session token Node-RED issued itself (user ${JSON.stringify(String(username).slice(0, 64))}): ` +
            'only flowadmin tokens are accepted. It is a session from before this instance used flowadmin, ' +
            'or Node-RED is older than 3.0, whose login ignores the flowadmin token (the editor needs 3.0 or later)',
        )
      }
      return null
    }),

    /**
     * Every admin request's bearer token (Node-RED's `tokens` strategy, after its own sessions),
     * and the editor's socket when it connects: `{username, permissions}` while flowadmin says the
     * token is active, else null, which Node-RED answers with 401.
     */
    tokens: neverRejects(log, 'tokens', async (token) => {
      if (typeof token !== 'string' || token === '' || token.length > MAX_TOKEN_LENGTH) return null
      // The fleet agent's own calls to this instance; its token never leaves this process.
      if (state.fleet?.isAgentToken(token)) return state.fleet.agentUser()
      // The editor's logout, held by the middleware until its token was revoked, runs once as
      // its user through this ticket (see middleware.js); a ticket is never asked at flowadmin.
      if (revocations.isTicket(token)) return revocations.takeTicket(token) ?? null
      // Logged out here, its revocation not yet at flowadmin (before a restart too): refused.
      state.restoreLogouts?.()
      if (revocations.refuses(token)) return null
      const cached = cache.get(token)
      if (cached !== undefined) return copyOf(cached)
      // A token flowadmin refuses goes to the trail (when the audit logger shares these options):
      // Node-RED's own `auth.invalid-token` is its session lookup, which misses every flowadmin token.
      return userOf(token, AbortSignal.timeout(timeoutMs), () => state.trail?.invalidToken(token))
    }),
  }

  if (settings.sso !== null) {
    // The editor's "Sign in with …" button: the person signs in through flowadmin (and its
    // identity provider); the token the editor gets is flowadmin's, checked like any other.
    const { label, icon } = settings.sso
    return {
      type: 'strategy',
      strategy: {
        name: NAME,
        label,
        ...(icon !== null && { icon }),
        strategy: createStrategyClass(settings, state, userOf),
        options: {},
      },
      ...hooks,
    }
  }

  /** Names already told of (a bounded few): one line per person, however often they try. */
  const told = new Set()
  /** A person who must give a second factor tried the login form, which cannot ask for it. */
  const secondFactorNeeded = (username) => {
    if (told.has(username) || told.size >= 1000) return
    told.add(username)
    log(
      `${JSON.stringify(username.slice(0, 64))} must sign in with a second factor, which this login form cannot ask for: set the helper's sso option, so the editor signs people in on flowadmin's sign-in page`,
    )
  }

  return {
    // The login form (Node-RED shows it for this type only) and POST /auth/token.
    type: 'credentials',
    ...hooks,

    /**
     * The login form's check: the password grant at flowadmin, then the new token's introspection
     * for the name and permissions. Node-RED (3.0 and later) hands `token` to the editor instead
     * of issuing its own. Null for wrong credentials, a throttled user, or flowadmin failing.
     */
    authenticate: neverRejects(log, 'authenticate', async (username, password) => {
      if (!isCredential(username) || !isCredential(password)) return null
      // One deadline for both calls: the login waits timeoutMs at most.
      const signal = AbortSignal.timeout(timeoutMs)
      const login = await client.login(username, password, signal)
      if (login.outcome === 'refused' && login.reason === 'mfa_required') secondFactorNeeded(username)
      if (login.outcome !== 'issued') return null
      const user = await cache.share(login.token, (keep) => introspect(login.token, signal, keep))
      return user && { ...copyOf(user), token: login.token }
    }),
  }
}

module.exports = { createAdminAuth }
