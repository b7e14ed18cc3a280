// The fleet's identities: POST /auth/introspect asked by an enrolled instance with its own
// credential, beside the same asked by its resource server with the shared secret, against the
// built flowadmin in fleet mode (SQLite). The two windows alternate within each round; the goal is
// an enrolled instance's introspections at 0.9 × the shared secret's or more.
import { createHash } from 'node:crypto'
import { startBuiltServer } from './built-server.mjs'
import { ARGON2_OPTIONS, argon2, RESOURCE_SERVER } from './flowadmin.mjs'
import { runLoad, waitForIdle } from './load.mjs'

const USER = { username: 'admin', password: 'bench-password-0123' }
const FORM = 'application/x-www-form-urlencoded'
const CONNECTIONS = 10

const basic = (id, secret) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`

async function post(url, headers, body) {
  const response = await fetch(url, { method: 'POST', headers, body })
  const text = await response.text()
  if (!response.ok) throw new Error(`POST ${url} answered ${response.status} ${text}`)
  return JSON.parse(text)
}

/** A token of the bench user issued through `authorization` (a Node-RED editor's login form). */
const editorToken = async (url, authorization) =>
  (
    await post(
      `${url}/auth/token`,
      { authorization, 'content-type': FORM },
      new URLSearchParams({
        grant_type: 'password',
        scope: '',
        ...USER,
      }).toString(),
    )
  ).access_token

/** The scenario, for run.mjs's local scenarios. */
export function createIdentityScenario() {
  return {
    id: 'fleet-identity',
    title:
      'POST /auth/introspect by an enrolled instance (its own credential) and by its resource server (the shared secret), 10 connections each',
    local: true,
    async measure({ durationMs }) {
      const digest = `sha256:${createHash('sha256').update(RESOURCE_SERVER.secret).digest('hex')}`
      const server = await startBuiltServer('bench-identity', {
        uiHost: '127.0.0.1',
        auditLog: 'off',
        fleet: { modules: true },
        adminAuth: {
          type: 'credentials',
          users: [{ ...USER, password: await argon2.hash(USER.password, ARGON2_OPTIONS), permissions: '*' }],
          resourceServers: [{ id: RESOURCE_SERVER.id, secret: digest, fleet: true }],
        },
      })
      try {
        const json = { 'content-type': 'application/json' }
        const admin = (
          await post(
            `${server.url}/auth/token`,
            { 'content-type': FORM },
            new URLSearchParams({
              grant_type: 'password',
              client_id: 'service-admin',
              scope: '*',
              ...USER,
            }).toString(),
          )
        ).access_token
        const { token } = await post(
          `${server.url}/fleet/enrolments`,
          { ...json, authorization: `Bearer ${admin}` },
          JSON.stringify({ resourceServer: RESOURCE_SERVER.id, instance: 'nr-1' }),
        )
        const own = await post(`${server.url}/fleet/enrol`, json, JSON.stringify({ token }))
        const callers = {
          shared: basic(RESOURCE_SERVER.id, RESOURCE_SERVER.secret),
          enrolled: basic(own.clientId, own.clientSecret),
        }
        const tokens = {
          shared: await editorToken(server.url, callers.shared),
          enrolled: await editorToken(server.url, callers.enrolled),
        }
        const window = (who, ms) =>
          runLoad({
            url: `${server.url}/auth/introspect`,
            pid: server.child.pid,
            durationMs: ms,
            connections: CONNECTIONS,
            method: 'POST',
            headers: { authorization: callers[who], 'content-type': FORM },
            body: `token=${encodeURIComponent(tokens[who])}`,
          })
        // Warm-up: both, briefly.
        await window('shared', 500)
        await window('enrolled', 500)
        const result = {}
        for (const who of ['shared', 'enrolled', 'enrolled', 'shared']) {
          await waitForIdle(server.child.pid)
          const measured = await window(who, durationMs / 2)
          if (measured.non2xx + measured.errors > 0)
            throw new Error(`${who}: ${measured.non2xx} non-2xx answers`)
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
        return { shared: of('shared'), enrolled: of('enrolled') }
      } finally {
        await server.stop()
      }
    },
    describe: (result) =>
      `shared ${result.shared.rps.toFixed(0)}/s, enrolled ${result.enrolled.rps.toFixed(0)}/s (${(result.enrolled.rps / result.shared.rps).toFixed(2)} ×)`,
    combine(rounds) {
      const mean = (get) => rounds.reduce((sum, round) => sum + get(round), 0) / rounds.length
      return {
        kind: 'fleet-identity',
        rounds: rounds.length,
        shared: { rps: mean((r) => r.shared.rps), cpuUs: mean((r) => r.shared.cpuUs) },
        enrolled: { rps: mean((r) => r.enrolled.rps), cpuUs: mean((r) => r.enrolled.cpuUs) },
      }
    },
    rows: identityRows,
  }
}

/** The scenario's figures as rows of label and value (the run's table, and docs/benchmarks.md). */
export function identityRows(local) {
  const ratio = local.enrolled.rps / local.shared.rps
  return [
    ['shared secret: introspections/s', local.shared.rps.toFixed(0)],
    ['enrolled instance: introspections/s', local.enrolled.rps.toFixed(0)],
    ['shared secret: server CPU µs per introspection', local.shared.cpuUs.toFixed(1)],
    ['enrolled instance: server CPU µs per introspection', local.enrolled.cpuUs.toFixed(1)],
    ['enrolled ÷ shared (req/s)', ratio.toFixed(2)],
    ['goal: enrolled at least 0.9 × shared', ratio >= 0.9 ? 'met' : 'missed'],
  ]
}
