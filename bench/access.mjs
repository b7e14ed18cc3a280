// Who may do what, where: POST /auth/introspect asked by an enrolled instance for a person with
// 50 grants (1,000 grants in all, 20 people, over 200 instances in 20 groups), beside the same asked
// for a person with `*` and no grant, against the built flowadmin in fleet mode (SQLite). The two
// windows alternate within each round; the goal is the granted person's introspections at 0.9 × the
// other's or more (the answer for an instance must not scan the grants).
import { createHash } from 'node:crypto'
import { startBuiltServer } from './built-server.mjs'
import { ARGON2_OPTIONS, argon2, RESOURCE_SERVER } from './flowadmin.mjs'
import { runLoad, waitForIdle } from './load.mjs'

const PASSWORD = 'bench-password-0123'
const FORM = 'application/x-www-form-urlencoded'
const CONNECTIONS = 10
const GROUPS = 20
const PEOPLE = 20
const GRANTS_EACH = 50
const ROLES = ['viewer', 'deployer', 'palette-admin']

const basic = (id, secret) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`

async function post(url, headers, body) {
  const response = await fetch(url, { method: 'POST', headers, body })
  const text = await response.text()
  if (!response.ok) throw new Error(`POST ${url} answered ${response.status} ${text}`)
  return JSON.parse(text)
}

/** A session of `username` issued through `authorization` (a Node-RED editor's login form). */
const editorToken = async (url, authorization, username) =>
  (
    await post(
      `${url}/auth/token`,
      { authorization, 'content-type': FORM },
      new URLSearchParams({ grant_type: 'password', scope: '', username, password: PASSWORD }).toString(),
    )
  ).access_token

/** Twenty groups of ten instances each (`g<n>-<i>`), and twenty people with fifty grants each. */
function accessSettings(hash) {
  const groups = Object.fromEntries(Array.from({ length: GROUPS }, (_, g) => [`g${g}`, [`g${g}-*`]]))
  const people = Array.from({ length: PEOPLE }, (_, p) => ({
    username: `person-${p}`,
    password: hash,
    grants: Array.from({ length: GRANTS_EACH }, (_, k) => ({
      role: ROLES[(p + k) % ROLES.length],
      on: k === 0 ? 'everywhere' : `g${(p * 7 + k) % GROUPS}`,
    })),
  }))
  return { groups, people }
}

/** The scenario, for run.mjs's local scenarios. */
export function createAccessScenario() {
  return {
    id: 'access',
    title:
      'POST /auth/introspect by an enrolled instance: a person with 50 of 1,000 grants (200 instances, 20 groups) beside one with `*` and none, 10 connections each',
    local: true,
    async measure({ durationMs }) {
      const digest = `sha256:${createHash('sha256').update(RESOURCE_SERVER.secret).digest('hex')}`
      const hash = await argon2.hash(PASSWORD, ARGON2_OPTIONS)
      const { groups, people } = accessSettings(hash)
      const server = await startBuiltServer('bench-access', {
        uiHost: '127.0.0.1',
        auditLog: 'off',
        fleet: { modules: true, groups },
        adminAuth: {
          type: 'credentials',
          users: [{ username: 'plain', password: hash, permissions: '*' }, ...people],
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
              username: 'plain',
              password: PASSWORD,
            }).toString(),
          )
        ).access_token
        const { token } = await post(
          `${server.url}/fleet/enrolments`,
          { ...json, authorization: `Bearer ${admin}` },
          JSON.stringify({ resourceServer: RESOURCE_SERVER.id, instance: 'g7-3' }),
        )
        const own = await post(`${server.url}/fleet/enrol`, json, JSON.stringify({ token }))
        const caller = basic(own.clientId, own.clientSecret)
        const tokens = {
          plain: await editorToken(server.url, caller, 'plain'),
          granted: await editorToken(server.url, caller, 'person-0'),
        }
        const window = (who, ms) =>
          runLoad({
            url: `${server.url}/auth/introspect`,
            pid: server.child.pid,
            durationMs: ms,
            connections: CONNECTIONS,
            method: 'POST',
            headers: { authorization: caller, 'content-type': FORM },
            body: `token=${encodeURIComponent(tokens[who])}`,
          })
        await window('plain', 500)
        await window('granted', 500)
        const result = {}
        for (const who of ['plain', 'granted', 'granted', 'plain']) {
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
        return { plain: of('plain'), granted: of('granted') }
      } finally {
        await server.stop()
      }
    },
    describe: (result) =>
      `no grants ${result.plain.rps.toFixed(0)}/s, 50 of 1,000 grants ${result.granted.rps.toFixed(0)}/s (${(result.granted.rps / result.plain.rps).toFixed(2)} ×)`,
    combine(rounds) {
      const mean = (get) => rounds.reduce((sum, round) => sum + get(round), 0) / rounds.length
      return {
        kind: 'access',
        rounds: rounds.length,
        plain: { rps: mean((r) => r.plain.rps), cpuUs: mean((r) => r.plain.cpuUs) },
        granted: { rps: mean((r) => r.granted.rps), cpuUs: mean((r) => r.granted.cpuUs) },
      }
    },
    rows: accessRows,
  }
}

/** The scenario's figures as rows of label and value (the run's table, and docs/benchmarks.md). */
export function accessRows(local) {
  const ratio = local.granted.rps / local.plain.rps
  return [
    ['no grants (`*`): introspections/s', local.plain.rps.toFixed(0)],
    ['50 of 1,000 grants: introspections/s', local.granted.rps.toFixed(0)],
    ['no grants: server CPU µs per introspection', local.plain.cpuUs.toFixed(1)],
    ['50 of 1,000 grants: server CPU µs per introspection', local.granted.cpuUs.toFixed(1)],
    ['granted ÷ no grants (req/s)', ratio.toFixed(2)],
    ['goal: granted at least 0.9 × no grants', ratio >= 0.9 ? 'met' : 'missed'],
  ]
}
