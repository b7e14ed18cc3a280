'use strict'

const { MAX_TOKEN_LENGTH } = require('./client')

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
 * Node-RED's `httpAdminMiddleware`: the instance's own middleware first (it may be a gate: what it
 * refuses reaches neither flowadmin nor Node-RED), then the logout watch, then Node-RED.
 *
 * The logout (`POST /auth/revoke`) is forwarded to flowadmin once Node-RED has answered it, not
 * before: Node-RED's revoke route first checks the request's own bearer token (`needsPermission`),
 * which would fail with 401 had flowadmin already revoked it. The token revoked is that bearer
 * token; the editor sends the same one in the body. The body is never read here: Node-RED parses
 * it after this middleware.
 *
 * @param {import('./options').Settings} settings
 * @param {import('./state').State} state
 */
function createMiddleware(settings, state) {
  const { client, cache } = state

  /** After the response: the token leaves the cache, then flowadmin revokes it. */
  function forwardLogout(res, token) {
    let done = false
    const forward = () => {
      if (done) return
      done = true
      cache.forget(token)
      // Failures are told to the health state; the editor has its answer already.
      client.revoke(token, AbortSignal.timeout(settings.timeoutMs)).catch(() => {})
    }
    res.once('finish', forward)
    res.once('close', forward)
  }

  return function flowadminAdminMiddleware(req, res, next) {
    runChain(settings.middleware, req, res, (error) => {
      if (error !== undefined) return next(error)
      const path = typeof req.url === 'string' ? req.url.split('?')[0] : ''
      const token = req.method === 'POST' && REVOKE_PATH.test(path) ? bearerOf(req) : null
      if (token !== null) forwardLogout(res, token)
      next()
    })
  }
}

module.exports = { createMiddleware, runChain }
