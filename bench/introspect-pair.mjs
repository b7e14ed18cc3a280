// What the fleet-identity and access scenarios share: the calls that set up an enrolled instance
// on a built flowadmin, and two introspection loads compared window by window, alternating.
import { runLoad, waitForIdle } from './load.mjs'

export const FORM = 'application/x-www-form-urlencoded'
const JSON_TYPE = { 'content-type': 'application/json' }
const CONNECTIONS = 10

export const basic = (id, secret) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`

/** POSTs `body` and returns the JSON answer; throws unless 2xx. */
export async function post(url, headers, body) {
  const response = await fetch(url, { method: 'POST', headers, body })
  const text = await response.text()
  if (!response.ok) throw new Error(`POST ${url} answered ${response.status} ${text}`)
  return JSON.parse(text)
}

/** A token of `username` issued through `authorization` (a Node-RED editor's login form). */
export const editorToken = async (url, authorization, username, password) =>
  (
    await post(
      `${url}/auth/token`,
      { authorization, 'content-type': FORM },
      new URLSearchParams({ grant_type: 'password', scope: '', username, password }).toString(),
    )
  ).access_token

/**
 * Enrols an instance (`instance`, or one flowadmin names) of `resourceServer` with an enrolment
 * token made by `username` (who holds `*`): its Basic authorization.
 */
export async function enrolledCaller(url, { username, password, resourceServer, instance }) {
  const admin = (
    await post(
      `${url}/auth/token`,
      { 'content-type': FORM },
      new URLSearchParams({
        grant_type: 'password',
        client_id: 'service-admin',
        scope: '*',
        username,
        password,
      }).toString(),
    )
  ).access_token
  const { token } = await post(
    `${url}/fleet/enrolments`,
    { ...JSON_TYPE, authorization: `Bearer ${admin}` },
    JSON.stringify({ resourceServer, ...(instance === undefined ? {} : { instance }) }),
  )
  const own = await post(`${url}/fleet/enrol`, JSON_TYPE, JSON.stringify({ token }))
  return basic(own.clientId, own.clientSecret)
}

/**
 * Introspection at `server` by two callers (or of two tokens), in windows that alternate a, b, b,
 * a after a brief warm-up of each: for each, requests per second and server CPU µs per request.
 * `sides`: { name: { authorization, token } } with two names.
 */
export async function introspectPair(server, sides, durationMs) {
  const window = (who, ms) =>
    runLoad({
      url: `${server.url}/auth/introspect`,
      pid: server.child.pid,
      durationMs: ms,
      connections: CONNECTIONS,
      method: 'POST',
      headers: { authorization: sides[who].authorization, 'content-type': FORM },
      body: `token=${encodeURIComponent(sides[who].token)}`,
    })
  const [a, b] = Object.keys(sides)
  await window(a, 500)
  await window(b, 500)
  const result = {}
  for (const who of [a, b, b, a]) {
    await waitForIdle(server.child.pid)
    const measured = await window(who, durationMs / 2)
    if (measured.non2xx + measured.errors > 0) throw new Error(`${who}: ${measured.non2xx} non-2xx answers`)
    const sum = result[who] ?? { count: 0, elapsedMs: 0, cpuMs: 0 }
    result[who] = {
      count: sum.count + measured.count,
      elapsedMs: sum.elapsedMs + measured.elapsedMs,
      cpuMs: sum.cpuMs + measured.cpuMs,
    }
  }
  const of = (who) => ({
    rps: (result[who].count * 1000) / result[who].elapsedMs,
    cpuUs: (result[who].cpuMs * 1000) / result[who].count,
  })
  return { [a]: of(a), [b]: of(b) }
}
