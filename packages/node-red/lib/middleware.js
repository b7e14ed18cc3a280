'use strict'

const { MAX_TOKEN_LENGTH } = require('./client')
const { isLocalPeer } = require('./local-admin')

/**
 * The editor's logout, as Node-RED routes it below httpAdminRoot: `adminApp.post('/auth/revoke')`
 * matches without regard to case and with an optional trailing slash (Express's defaults).
 */
const REVOKE_PATH = /^\/auth\/revoke\/?$/i

/**
 * The bearer token as Node-RED's `tokens` strategy reads it (`Bearer <token>`), which is how the
 * flowadmin token got in; null without one.
 */
function bearerOf(req) {
  const header = req.headers?.authorization
  if (typeof header !== 'string') return null
  const [scheme, token] = header.split(' ')
  // The scheme in any case, as Node-RED's own bearer strategy reads it.
  return /^bearer$/i.test(scheme ?? '') && token && token.length <= MAX_TOKEN_LENGTH ? token : null
}

/**
 * Runs Express middleware in order as `app.use([...])` would: an error skips to the next
 * four-argument handler, `next('route')` is `next()`, `next('router')` leaves the chain, a throw is
 * an error. `done(error)` follows the last one.
 */
function runChain(chain, req, res, done) {
  let index = 0
  function next(error) {
    if (error === 'router') return done(error)
    const failing = Boolean(error) && error !== 'route'
    const handler = chain[index]
    index += 1
    if (handler === undefined) return done(failing ? error : undefined)
    // Express's rule: error handlers take exactly four arguments, the others at most three.
    if (failing ? handler.length !== 4 : handler.length > 3) return next(failing ? error : undefined)
    try {
      if (failing) handler(error, req, res, next)
      else handler(req, res, next)
    } catch (thrown) {
      next(thrown)
    }
  }
  next()
}

/**
 * Who Node-RED's logout runs as when flowadmin could not say whose the token is (it was
 * unreachable): no name and no permissions, as Node-RED's own anonymous user has them.
 */
const UNVERIFIED = Object.freeze({ anonymous: true, permissions: [] })

/** The answer to a logout that could be neither revoked nor remembered (see revocations.js). */
function refuseLogout(res) {
  res.statusCode = 503
  res.setHeader('Content-Type', 'application/json; charset=utf-8')
  res.end(
    JSON.stringify({
      code: 'logout_unavailable',
      message: 'The logout could not reach flowadmin and could not be kept: try again later',
    }),
  )
}

/**
 * Node-RED's `httpAdminMiddleware`: the instance's own middleware first (it may be a gate: what it
 * refuses reaches neither flowadmin nor Node-RED), then the logout, then Node-RED.
 *
 * The logout (`POST /auth/revoke`) is held here until its bearer token is dead, and only then
 * goes on to Node-RED's own logout, which answers the editor (200, or its
 * `editorTheme.logout.redirect`) and writes its audit line:
 * 1. whose the token is: the cache, else an introspection (an inactive token goes on to Node-RED
 *    unchanged, which refuses it with 401 as any dead token);
 * 2. the token leaves the cache and is refused here from then on;
 * 3. flowadmin revokes it. When flowadmin cannot be reached, the token stays refused here and the
 *    revocation is retried until flowadmin takes it (revocations.js): the logout still succeeds,
 *    since the stock editor forgets its token only on a 200, and shows nothing on an error.
 * 4. Node-RED's revoke route checks the request's bearer token first (`needsPermission`), which
 *    is no longer good: so the request carries a one-time ticket instead, which `adminAuth.tokens`
 *    answers with the token's user, once. The body (Node-RED parses it after this middleware) is
 *    never read: the token revoked is the bearer one, and the editor sends the same in both.
 * The steps share one deadline, `timeoutMs`.
 *
 * @param {import('./options').Settings} settings
 * @param {import('./state').State} state
 */
function createMiddleware(settings, state) {
  const { client, cache, revocations } = state

  /**
   * Steps 1 to 3: the user Node-RED's logout runs as; null for a token flowadmin says is not
   * valid (nothing to revoke); undefined when the logout can be neither revoked nor kept.
   */
  async function endToken(token) {
    // A second logout of a token already refused here: nothing more to do.
    state.restoreLogouts?.()
    if (revocations.refuses(token)) return UNVERIFIED
    const signal = AbortSignal.timeout(settings.timeoutMs)
    let user = cache.get(token)
    let expiresAt = null
    if (user === undefined) {
      const answer = await client.introspect(token, signal)
      if (answer.outcome === 'inactive') return null
      if (answer.outcome === 'active') {
        user = answer.user
        expiresAt = answer.expiresAt
      }
    }
    cache.forget(token)
    // A token this instance cannot vouch for (flowadmin unreachable, not cached) may be anyone's
    // string: its logout waits apart, and never makes a real one's wait for room (revocations.js).
    const outcome = await revocations.revoke(token, expiresAt, signal, user !== undefined)
    if (outcome === 'full') return undefined
    return user ?? UNVERIFIED
  }

  /** Step 4: Node-RED's logout runs with a ticket for `user` in place of the dead token. */
  function runAs(req, res, user, next) {
    const ticket = revocations.ticketFor({ ...user })
    const drop = () => revocations.dropTicket(ticket)
    res.once('finish', drop)
    res.once('close', drop)
    req.headers.authorization = `Bearer ${ticket}`
    next()
  }

  function logout(req, res, token, next) {
    endToken(token)
      .then(
        (user) => {
          if (user === null) return next()
          if (user === undefined) return refuseLogout(res)
          runAs(req, res, user, next)
        },
        (error) => {
          const what = error instanceof Error ? `${error.name}: ${error.message}` : String(error)
          settings.log(`the logout failed unexpectedly (${what.split('\n')[0]}): answered 503`)
          refuseLogout(res)
        },
      )
      // Whatever happens above stays here: nothing rejects into Node-RED.
      .catch(() => {})
  }

  return function flowadminAdminMiddleware(req, res, next) {
    // The fleet agent's own token is only ever sent from this machine: from elsewhere, refused
    // before anything else (adminAuth.tokens sees the token only, not who sent it).
    const bearer = state.fleet === null ? null : bearerOf(req)
    if (bearer !== null && state.fleet?.isAgentToken(bearer) && !isLocalPeer(req.socket?.remoteAddress)) {
      res.statusCode = 401
      res.setHeader('Content-Type', 'application/json; charset=utf-8')
      res.end(JSON.stringify({ code: 'unauthorized', message: 'Unauthorized' }))
      return
    }
    runChain(settings.middleware, req, res, (error) => {
      if (error !== undefined) return next(error)
      const path = typeof req.url === 'string' ? req.url.split('?')[0] : ''
      const token = req.method === 'POST' && REVOKE_PATH.test(path) ? bearerOf(req) : null
      if (token === null) return next()
      logout(req, res, token, next)
    })
  }
}

module.exports = { createMiddleware, runChain }
