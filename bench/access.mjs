// Who may do what, where: POST /auth/introspect asked by an enrolled instance for a person with
// 50 grants (1,000 grants in all, 20 people, over 200 instances in 20 groups), beside the same asked
// for a person with `*` and no grant, against the built flowadmin in fleet mode (SQLite). The two
// windows alternate within each round; the goal is the granted person's introspections at 0.9 × the
// other's or more (the answer for an instance must not scan the grants).
import { createHash } from 'node:crypto'
import { startBuiltServer } from './built-server.mjs'
import { ARGON2_OPTIONS, argon2, RESOURCE_SERVER } from './flowadmin.mjs'
import { editorToken, enrolledCaller, introspectPair } from './introspect-pair.mjs'

const PASSWORD = 'bench-password-0123'
const GROUPS = 20
const PEOPLE = 20
const GRANTS_EACH = 50
const ROLES = ['viewer', 'deployer', 'palette-admin']

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
        const caller = await enrolledCaller(server.url, {
          username: 'plain',
          password: PASSWORD,
          resourceServer: RESOURCE_SERVER.id,
          instance: 'g7-3',
        })
        return await introspectPair(
          server,
          {
            plain: { authorization: caller, token: await editorToken(server.url, caller, 'plain', PASSWORD) },
            granted: {
              authorization: caller,
              token: await editorToken(server.url, caller, 'person-0', PASSWORD),
            },
          },
          durationMs,
        )
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
