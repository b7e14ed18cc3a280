'use strict'

const { version } = require('../package.json')
const { routeOf } = require('./proxy')

// Every call the helper makes to flowadmin goes through `request`: introspection, login, the code
// exchange of a sign-in, revocation, audit events, the fleet's poll and report, and the exit flush.
// So the environment's proxy (proxy.js), the keep-alive connections, the deadline and the bound on
// an answer's size hold for all of them alike. It never rejects, and never follows a redirect:
// the client's credentials go to `url` and nowhere else.

const USER_AGENT = `flowadmin-node-red/${version}`
/** The largest answer read; flowadmin's are far smaller. */
const MAX_ANSWER_BYTES = 4 * 1024 * 1024
/** Errors of a kept-alive connection the server closed as the request left: sent again, once… */
const STALE_CONNECTION = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED'])
/** …when they come this soon: later, the request may have been taken (a proxy cut a held poll). */
const STALE_WITHIN_MS = 1000

/**
 * @typedef {object} Answer
 * @property {number} status
 * @property {Record<string, string | string[] | undefined>} headers lower-case names
 * @property {string} text
 * @property {Buffer} [bytes] the answer's bytes, when asked for (`binary`); `text` is then empty
 */

/**
 * @typedef {object} Failure no answer
 * @property {0} status
 * @property {'timeout' | 'aborted' | 'reset' | 'refused' | 'network' | 'proxy' | 'too-large'} failure
 *   reset: the connection ended before an answer (a proxy or gateway may have cut it)
 * @property {string} reason a few words, for a log line
 */

/** A Failure for an error of the request or its socket. */
function failureOf(error) {
  const code = error?.code ?? ''
  const reason = String(code || error?.message || error).slice(0, 200)
  if (code === 'EPROXY') return { status: 0, failure: 'proxy', reason: String(error.message).slice(0, 200) }
  if (code === 'ECONNREFUSED') return { status: 0, failure: 'refused', reason }
  if (code === 'ECONNRESET' || code === 'EPIPE' || error?.message === 'socket hang up') {
    return { status: 0, failure: 'reset', reason: code || 'socket hang up' }
  }
  return { status: 0, failure: 'network', reason }
}

/**
 * One request.
 *
 * @param {string} address the absolute URL
 * @param {object} options
 * @param {string} [options.method] default GET
 * @param {Record<string, string>} [options.headers]
 * @param {string | Buffer} [options.body]
 * @param {number} [options.timeoutMs] the deadline of the whole exchange
 * @param {AbortSignal} [options.signal] ends it too (a timeout signal counts as a timeout)
 * @param {number} [options.maxBytes] the largest answer read (default 4 MiB); a larger one, said or
 *   sent, is a `too-large` failure
 * @param {boolean} [options.binary] the answer as `bytes`, not as text
 * @returns {Promise<Answer | Failure>} never rejects
 */
function request(address, options = {}) {
  return new Promise((resolve) => {
    let url
    try {
      url = new URL(address)
    } catch {
      resolve({ status: 0, failure: 'network', reason: 'not a valid URL' })
      return
    }
    const deadline = typeof options.timeoutMs === 'number' ? Date.now() + options.timeoutMs : null
    send(url, options, deadline, true, resolve)
  })
}

function send(url, options, deadline, mayRetry, resolve) {
  const { signal } = options
  const sentAt = Date.now()
  const body = options.body === undefined ? null : Buffer.from(options.body)
  let settled = false
  let timer = null
  let req = null
  const finish = (outcome) => {
    if (settled) return
    settled = true
    if (timer !== null) clearTimeout(timer)
    signal?.removeEventListener('abort', onAbort)
    resolve(outcome)
  }
  const end = (outcome) => {
    finish(outcome)
    req?.destroy()
  }
  function onAbort() {
    const reason = signal?.reason
    end(
      reason?.name === 'TimeoutError'
        ? { status: 0, failure: 'timeout', reason: 'no answer in time' }
        : { status: 0, failure: 'aborted', reason: 'aborted' },
    )
  }
  if (signal?.aborted) {
    onAbort()
    return
  }
  signal?.addEventListener('abort', onAbort, { once: true })
  if (deadline !== null) {
    timer = setTimeout(
      () => end({ status: 0, failure: 'timeout', reason: 'no answer in time' }),
      Math.max(0, deadline - Date.now()),
    )
    timer.unref?.()
  }
  let route
  try {
    route = routeOf(url)
  } catch (error) {
    finish(failureOf(error))
    return
  }
  try {
    req = route.transport.request(
      {
        method: options.method ?? 'GET',
        host: route.host,
        port: route.port,
        path: route.path,
        agent: route.agent,
        headers: {
          'User-Agent': USER_AGENT,
          ...route.headers,
          ...options.headers,
          ...(body !== null && { 'Content-Length': String(body.length) }),
        },
        ...(route.servername !== undefined && { servername: route.servername }),
      },
      (response) => {
        const chunks = []
        let size = 0
        const most = options.maxBytes ?? MAX_ANSWER_BYTES
        const tooLarge = { status: 0, failure: 'too-large', reason: `an answer over ${most} bytes` }
        if (Number(response.headers['content-length']) > most) {
          end(tooLarge)
          return
        }
        response.on('data', (chunk) => {
          size += chunk.length
          if (size > most) {
            end(tooLarge)
            return
          }
          chunks.push(chunk)
        })
        response.on('end', () => {
          const bytes = Buffer.concat(chunks)
          finish({
            status: response.statusCode ?? 0,
            headers: response.headers,
            ...(options.binary ? { text: '', bytes } : { text: bytes.toString('utf8') }),
          })
        })
        response.on('error', (error) => finish(failureOf(error)))
        response.on('aborted', () => finish({ status: 0, failure: 'reset', reason: 'the answer was cut' }))
      },
    )
  } catch (error) {
    // A header Node refuses (a character it cannot send), say: no request, no answer.
    finish(failureOf(error))
    return
  }
  req.on('error', (error) => {
    if (settled) return
    // A kept-alive connection the server closed just as this request left on it: nothing reached
    // the server, so it is sent again on a new one, once (as Node's documentation advises).
    if (
      mayRetry &&
      req.reusedSocket &&
      STALE_CONNECTION.has(error?.code) &&
      Date.now() - sentAt < STALE_WITHIN_MS
    ) {
      settled = true
      if (timer !== null) clearTimeout(timer)
      signal?.removeEventListener('abort', onAbort)
      send(url, options, deadline, false, resolve)
      return
    }
    finish(failureOf(error))
  })
  req.end(body ?? undefined)
}

/** The JSON object of a text, or null. */
function objectOf(text) {
  try {
    const value = JSON.parse(text)
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : null
  } catch {
    return null
  }
}

module.exports = { objectOf, request, USER_AGENT }
