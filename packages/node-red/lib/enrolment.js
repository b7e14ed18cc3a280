'use strict'

const { request, objectOf } = require('./http')

// The two calls that give this instance a credential of its own: the enrolment, which trades the
// one-time enrolment token for one (`POST /fleet/enrol`, no other credential), and the rotation,
// which trades the current one for a new one (`POST /fleet/instances/{id}/credential`). Both
// resolve to an outcome value and never reject; the enrolment token is never part of a log line.

const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/
/** The longest refusals are waited on: a spent token is not tried every few seconds for ever. */
const MAX_REFUSED_WAIT_MS = 5 * 60_000
const FIRST_REFUSED_WAIT_MS = 5000

/** What flowadmin's refusals of an enrolment mean for the person who set the instance up. */
const ADVICE = {
  invalid_enrolment: 'the enrolment token is unknown, already used or expired: give this instance a new one',
  instance_mismatch: 'the enrolment token is for another instance id than the instanceId option',
  instance_conflict:
    'another instance is enrolled with this id: give it another instanceId, or revoke the other',
  too_many_instances: 'the resource server has as many instances as it may have',
  invalid_request: 'flowadmin found the request invalid',
  throttled: 'too many enrolments at once',
}

/** A short text of flowadmin's, one line, with the token (should it ever be echoed) left out. */
function textOf(value, token) {
  if (typeof value !== 'string') return ''
  const line = value.split('\n')[0].slice(0, 300)
  return token === null ? line : line.split(token).join('…')
}

/** flowadmin's error code (`code`, or OAuth's `error`), or ''. */
function codeOf(body) {
  const code = typeof body?.code === 'string' ? body.code : typeof body?.error === 'string' ? body.error : ''
  return /^[a-z_]{1,64}$/.test(code) ? code : ''
}

/**
 * `POST <url>/fleet/enrol`.
 * @returns {Promise<{outcome: 'enrolled', instance: string, resourceServer: string, clientId: string, clientSecret: string}
 *   | {outcome: 'refused' | 'failed', line: string, retryAfter: string | undefined}>}
 *   refused: flowadmin said no (4xx); failed: no answer, or not one of the contract's
 */
async function enrol({ url, token, instanceId, nodeRedVersion, timeoutMs, signal }) {
  const answer = await request(`${url}/fleet/enrol`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
    body: JSON.stringify({
      token,
      ...(instanceId !== null && { instance: instanceId }),
      nodeRedVersion,
    }),
    timeoutMs,
    signal,
  })
  if (answer.status === 0) {
    return {
      outcome: 'failed',
      line: `enrolment: flowadmin at ${url} cannot be reached (${answer.reason}): tried again`,
    }
  }
  const body = objectOf(answer.text)
  if (
    answer.status === 201 &&
    typeof body?.instance === 'string' &&
    ID.test(body.instance) &&
    typeof body.clientId === 'string' &&
    body.clientId !== '' &&
    typeof body.clientSecret === 'string' &&
    body.clientSecret !== ''
  ) {
    return {
      outcome: 'enrolled',
      instance: body.instance,
      resourceServer: typeof body.resourceServer === 'string' ? body.resourceServer : '',
      clientId: body.clientId,
      clientSecret: body.clientSecret,
    }
  }
  const code = codeOf(body)
  const message = textOf(body?.message, token)
  const said = `HTTP ${answer.status}${code === '' ? '' : ` ${code}`}${message === '' ? '' : `: ${message}`}`
  if (answer.status >= 400 && answer.status < 500) {
    const advice = ADVICE[code] ?? (answer.status === 429 ? ADVICE.throttled : 'see flowadmin’s audit trail')
    return {
      outcome: 'refused',
      line: `enrolment: flowadmin at ${url} refused this instance's enrolment (${said}): ${advice}; tried again later`,
      retryAfter: answer.headers['retry-after'],
    }
  }
  return {
    outcome: 'failed',
    line: `enrolment: flowadmin at ${url} answered the enrolment ${said}, not what it should: tried again`,
  }
}

/**
 * `POST <url>/fleet/instances/{id}/credential` with the current credential.
 * @returns {Promise<{outcome: 'rotated', clientId: string, clientSecret: string} | {outcome: 'failed', line: string}>}
 */
async function rotate({ url, instance, authorization, timeoutMs, signal }) {
  const answer = await request(`${url}/fleet/instances/${encodeURIComponent(instance)}/credential`, {
    method: 'POST',
    headers: { Authorization: authorization, Accept: 'application/json' },
    timeoutMs,
    signal,
  })
  if (answer.status === 0) {
    return {
      outcome: 'failed',
      line: `flowadmin at ${url} cannot be reached to rotate this instance's credential (${answer.reason}): tried again`,
    }
  }
  const body = objectOf(answer.text)
  if (
    answer.status === 200 &&
    typeof body?.clientId === 'string' &&
    body.clientId !== '' &&
    typeof body.clientSecret === 'string' &&
    body.clientSecret !== ''
  ) {
    return { outcome: 'rotated', clientId: body.clientId, clientSecret: body.clientSecret }
  }
  const code = codeOf(body)
  const message = textOf(body?.message, null)
  return {
    outcome: 'failed',
    line: `flowadmin at ${url} refused to rotate this instance's credential (HTTP ${answer.status}${code === '' ? '' : ` ${code}`}${message === '' ? '' : `: ${message}`}): it keeps the one it has; tried again`,
  }
}

/** The wait after `refusals` refusals in a row: 5 s, 10 s, 20 s … up to 5 minutes, jittered. */
function refusedWait(refusals, random = Math.random) {
  const ceiling = Math.min(MAX_REFUSED_WAIT_MS, FIRST_REFUSED_WAIT_MS * 2 ** Math.min(refusals - 1, 16))
  return Math.floor(ceiling * (0.5 + random() / 2))
}

module.exports = { enrol, refusedWait, rotate }
