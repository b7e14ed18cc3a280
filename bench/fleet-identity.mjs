// The fleet's identities: POST /auth/introspect asked by an enrolled instance with its own
// credential, beside the same asked by its resource server with the shared secret, against the
// built flowadmin in fleet mode (SQLite). The two windows alternate within each round; the goal is
// an enrolled instance's introspections at 0.9 × the shared secret's or more.
import { createHash } from 'node:crypto'
import { startBuiltServer } from './built-server.mjs'
import { ARGON2_OPTIONS, argon2, RESOURCE_SERVER } from './flowadmin.mjs'
import { basic, editorToken, enrolledCaller, introspectPair } from './introspect-pair.mjs'

const USER = { username: 'admin', password: 'bench-password-0123' }
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
        const callers = {
          shared: basic(RESOURCE_SERVER.id, RESOURCE_SERVER.secret),
          enrolled: await enrolledCaller(server.url, {
            ...USER,
            resourceServer: RESOURCE_SERVER.id,
            instance: 'nr-1',
          }),
        }
        const token = (who) => editorToken(server.url, callers[who], USER.username, USER.password)
        return await introspectPair(
          server,
          {
            shared: { authorization: callers.shared, token: await token('shared') },
            enrolled: { authorization: callers.enrolled, token: await token('enrolled') },
          },
          durationMs,
        )
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
