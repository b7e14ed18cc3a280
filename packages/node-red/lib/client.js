'use strict'

const { objectOf, request } = require('./http')

// The calls to flowadmin. Each resolves to an outcome value and never throws: a failure is
// told to the health state (one log line per outage) and ends as 'failed', which the hooks turn
// into "no user" (fail closed).

/**
 * The longest token sent to flowadmin. Far longer than any flowadmin token (43 characters, a few
 * more with an API token's prefix); anything longer is junk, refused without asking.
 */
const MAX_TOKEN_LENGTH = 1024

/** One value of an `application/x-www-form-urlencoded` body (spaces as `+`). */
function formEncode(value) {
  return new URLSearchParams([['', value]]).toString().slice(1)
}

/** RFC 6749 §2.3.1: the client id and secret are form-encoded before they are joined and base64'd. */
function basicAuthorization(clientId, clientSecret) {
  return `Basic ${Buffer.from(`${formEncode(clientId)}:${formEncode(clientSecret)}`).toString('base64')}`
}

/** Why a request got no answer, in a few words. */
function reasonOf(failure, timeoutMs) {
  return failure.failure === 'timeout' || failure.failure === 'aborted'
    ? `no answer within ${timeoutMs} ms`
    : failure.reason
}

/** `read nodes.write` → `['read', 'nodes.write']`; one word stays a string, as in Node-RED's settings. */
function permissionsOf(scope) {
  const words = typeof scope === 'string' ? scope.split(' ').filter((word) => word !== '') : []
  return words.length === 1 ? words[0] : words
}

/**
 * @param {import('./options').Settings} settings
 * @param {ReturnType<import('./health').createHealth>} health
 * @param {ReturnType<import('./credentials').createCredentials>} credentials the client id and
 *   secret the calls carry (this instance's own, or the shared ones), asked at every call
 */
function createClient(settings, health, credentials) {
  const { url, timeoutMs } = settings
  const reachable = `flowadmin at ${url} is reachable again`
  /** The client credentials of a call now: its Authorization header, or null (none yet). */
  const clientAuthorization = () => credentials.authorization()

  /**
   * POSTs a form: the answer (status, JSON body or null, and the health ticket of the request), or
   * null when there was none, already told to the health state. Redirects are not followed: the
   * client's credentials go to `url` and nowhere else.
   */
  async function post(path, form, authorize, signal) {
    const ticket = health.begin()
    const authorization = authorize()
    if (authorization === null) {
      // Not enrolled yet: nothing to call flowadmin with.
      health.fail(
        ticket,
        'unenrolled',
        `this instance has no credential for flowadmin at ${url} yet (it is not enrolled): logins and tokens are refused until it has one`,
        `this instance has its credential for flowadmin at ${url}: logins and tokens are checked again`,
      )
      return null
    }
    const answer = await request(`${url}${path}`, {
      method: 'POST',
      headers: {
        Authorization: authorization,
        'Content-Type': 'application/x-www-form-urlencoded',
        Accept: 'application/json',
      },
      body: new URLSearchParams(form).toString(),
      signal,
    })
    if (answer.status !== 0) return { ticket, status: answer.status, body: objectOf(answer.text) }
    health.fail(
      ticket,
      'unreachable',
      `flowadmin at ${url} is unreachable (${reasonOf(answer, timeoutMs)}): logins and tokens are refused until it answers`,
      reachable,
    )
    return null
  }

  /** Tells the health state about an answer outside the contract, or one that is an outage. */
  /** A token flowadmin issued (200 with an access token), noting that flowadmin answered; else null. */
  function issuedOf(answer) {
    const { status, body } = answer
    if (status !== 200 || typeof body?.access_token !== 'string' || body.access_token === '') return null
    health.ok(answer.ticket)
    credentials.accepted()
    return { outcome: 'issued', token: body.access_token }
  }

  function failAnswer(answer, path) {
    const { ticket, status, body } = answer
    const code = typeof body?.error === 'string' ? ` ${body.error.slice(0, 64)}` : ''
    if (status === 429 || status >= 500) {
      health.fail(
        ticket,
        'unavailable',
        `flowadmin at ${url} answers HTTP ${status}${code} to POST ${path}: logins and tokens are refused until it recovers`,
        reachable,
      )
    } else if (status === 401 && (path === '/auth/introspect' || body?.error === 'invalid_client')) {
      // This instance's own credential refused: revoked, said once by the credentials.
      if (credentials.rejected()) return
      const clientId = credentials.clientId()
      health.fail(
        ticket,
        'client',
        `flowadmin at ${url} refused client ${JSON.stringify(clientId)} (HTTP 401${code}): check clientId and clientSecret; every token is refused until it accepts them`,
        `flowadmin at ${url} accepts client ${JSON.stringify(clientId)} again`,
      )
    } else {
      const hint =
        status >= 300 && status < 400 ? ' (redirects are not followed: set url to where it leads)' : ''
      health.fail(
        ticket,
        'unexpected',
        `flowadmin at ${url} answered HTTP ${status}${code} to POST ${path}, not what it should${hint}: is url flowadmin's address?`,
        `flowadmin at ${url} answers as it should again`,
      )
    }
  }

  return {
    /**
     * RFC 7662 introspection.
     * @returns {Promise<{outcome: 'active', user: {username: string, permissions: string | string[]}, expiresAt: number | null} | {outcome: 'inactive'} | {outcome: 'failed'}>}
     */
    async introspect(token, signal) {
      const answer = await post('/auth/introspect', { token }, clientAuthorization, signal)
      if (answer === null) return { outcome: 'failed' }
      const { status, body } = answer
      if (status === 200 && body?.active === false) {
        health.ok(answer.ticket)
        credentials.accepted()
        return { outcome: 'inactive' }
      }
      if (
        status === 200 &&
        body?.active === true &&
        typeof body.username === 'string' &&
        body.username !== ''
      ) {
        health.ok(answer.ticket)
        credentials.accepted()
        const expiresAt = typeof body.exp === 'number' ? body.exp * 1000 : null
        return {
          outcome: 'active',
          user: { username: body.username, permissions: permissionsOf(body.scope) },
          expiresAt,
        }
      }
      failAnswer(answer, '/auth/introspect')
      return { outcome: 'failed' }
    },

    /**
     * The password grant, for the user's own permissions (an empty scope): flowadmin answers a
     * scope beyond the user as it answers a wrong password, so asking for `*` would refuse every
     * user with fewer rights, and count it as a failed login.
     * @returns {Promise<{outcome: 'issued', token: string} | {outcome: 'refused'} | {outcome: 'failed'}>}
     */
    async login(username, password, signal) {
      const form = {
        grant_type: 'password',
        client_id: credentials.clientId() ?? '',
        username,
        password,
        scope: '',
      }
      const answer = await post('/auth/token', form, clientAuthorization, signal)
      if (answer === null) return { outcome: 'failed' }
      const { status, body } = answer
      const issued = issuedOf(answer)
      if (issued !== null) return issued
      // Wrong credentials (401) and a throttled user (429) are answers about this login, not about
      // flowadmin: Node-RED tells the user the login failed, and nothing is logged here.
      // A refused client id or secret is this instance's settings, not the person: logged.
      if ((status === 401 && body?.error !== 'invalid_client') || status === 429) {
        return { outcome: 'refused' }
      }
      // The person must give a second factor, which this form cannot ask for: about them too.
      if (status === 403 && body?.error === 'mfa_required')
        return { outcome: 'refused', reason: 'mfa_required' }
      failAnswer(answer, '/auth/token')
      return { outcome: 'failed' }
    },

    /**
     * The authorization code grant (a person signed in through flowadmin's /auth/authorize): the
     * code, the redirect URI it was sent to and the PKCE verifier, with this client's credentials.
     * @returns {Promise<{outcome: 'issued', token: string} | {outcome: 'refused', reason: string} | {outcome: 'failed'}>}
     */
    async redeem(code, redirectUri, codeVerifier, signal) {
      const form = {
        grant_type: 'authorization_code',
        client_id: credentials.clientId() ?? '',
        code,
        redirect_uri: redirectUri,
        code_verifier: codeVerifier,
      }
      const answer = await post('/auth/token', form, clientAuthorization, signal)
      if (answer === null) return { outcome: 'failed' }
      const { status, body } = answer
      const issued = issuedOf(answer)
      if (issued !== null) return issued
      // A spent, expired or foreign code is about this sign-in, not about flowadmin.
      if (status === 400 && body?.error === 'invalid_grant') {
        const reason = typeof body.error_description === 'string' ? body.error_description.slice(0, 200) : ''
        return { outcome: 'refused', reason }
      }
      failAnswer(answer, '/auth/token')
      return { outcome: 'failed' }
    },

    /**
     * Revokes a token with itself as the credential: whoever holds a token may end it.
     * @returns {Promise<'revoked' | 'invalid' | 'failed'>}
     */
    async revoke(token, signal) {
      const answer = await post('/auth/revoke', { token }, () => `Bearer ${token}`, signal)
      if (answer === null) return 'failed'
      if (answer.status === 200) {
        health.ok(answer.ticket)
        return 'revoked'
      }
      // The token is no longer valid: nothing to revoke.
      if (answer.status === 401) return 'invalid'
      failAnswer(answer, '/auth/revoke')
      return 'failed'
    },
  }
}

module.exports = { basicAuthorization, createClient, MAX_TOKEN_LENGTH }
