// People of the organisation's directory: password sign-ins (POST /auth/token) of a person of a
// local slapd (adminAuth.ldap over StartTLS with a test CA) beside those of a user configured in
// flowadmin itself (argon2id), on the same built server in the same round, 4 connections each, one
// after the other. The directory's sign-ins cost a search with the service account, a bind as the
// person and their groups; the configured user's cost one argon2id verification.
import { startBuiltServer } from './built-server.mjs'
import { ARGON2_OPTIONS, argon2, FLOWADMIN_CLIENT } from './flowadmin.mjs'
import { runLoad, waitForIdle } from './load.mjs'
import { fmt } from './report.mjs'
import { GROUPS, PEOPLE, PEOPLE_OF_DIRECTORY, SERVICE_DN, SERVICE_PASSWORD, startSlapd } from './slapd.mjs'

const CONNECTIONS = 4
const LOCAL = { username: 'bench-admin', password: 'bench-admin-password' }
const PERSON = { username: 'ada', password: PEOPLE_OF_DIRECTORY.ada.password }

const form = ({ username, password }) =>
  new URLSearchParams({
    client_id: FLOWADMIN_CLIENT,
    grant_type: 'password',
    scope: '*',
    username,
    password,
  }).toString()

const strip = ({ latencies: _, ...rest }) => rest

/** One round: slapd and the server started, each kind of sign-in loaded for `durationMs`, both stopped. */
export async function measureDirectory({ durationMs }) {
  const slapd = await startSlapd({ tls: true })
  try {
    const passwordHash = await argon2.hash(LOCAL.password, ARGON2_OPTIONS)
    const server = await startBuiltServer('bench-directory', {
      userDir: '.',
      uiHost: '127.0.0.1',
      auditLog: 'off',
      adminAuth: {
        users: [{ username: LOCAL.username, password: passwordHash, permissions: '*' }],
        ldap: {
          url: slapd.url,
          startTls: true,
          caFile: slapd.ca,
          bindDn: SERVICE_DN,
          bindPassword: SERVICE_PASSWORD,
          userSearch: { base: PEOPLE, filter: '(uid={username})' },
          permissions: { map: { [`cn=nr-admins,${GROUPS}`]: '*' } },
        },
      },
    })
    try {
      const load = (credentials, window) =>
        runLoad({
          url: `${server.url}/auth/token`,
          pid: server.child.pid,
          durationMs: window,
          connections: CONNECTIONS,
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: form(credentials),
        })
      // A short warm-up of each: the directory's connections open, argon2's threads start.
      await load(PERSON, Math.min(durationMs, 1000))
      await load(LOCAL, Math.min(durationMs, 1000))
      await waitForIdle(server.child.pid)
      const directory = await load(PERSON, durationMs)
      await waitForIdle(server.child.pid)
      const password = await load(LOCAL, durationMs)
      // The logins the load left waiting for argon2 end before the server stops: one more waits
      // behind them in the queue.
      await fetch(`${server.url}/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: form(LOCAL),
      }).then((response) => response.arrayBuffer())
      return { directory: strip(directory), argon2: strip(password) }
    } finally {
      await server.stop()
    }
  } finally {
    await slapd.close()
  }
}

/** Its figures, round by round: sign-ins per second and latencies of each kind, and their ratio. */
export function directoryRows(rounds) {
  return rounds.flatMap((round, index) => [
    [
      `round ${index + 1}: directory (slapd, StartTLS) sign-ins/s`,
      `${fmt(round.directory.rps, 0)} (p50 ${fmt(round.directory.p50, 1)} ms, p99 ${fmt(round.directory.p99, 1)} ms)`,
    ],
    [
      `round ${index + 1}: argon2id sign-ins/s, same server`,
      `${fmt(round.argon2.rps, 0)} (p50 ${fmt(round.argon2.p50, 1)} ms, p99 ${fmt(round.argon2.p99, 1)} ms)`,
    ],
    [`round ${index + 1}: directory ÷ argon2id`, `${fmt(round.directory.rps / round.argon2.rps, 2)}×`],
    [
      `round ${index + 1}: answers other than 200 (directory, argon2id)`,
      `${round.directory.non2xx + round.directory.errors}, ${round.argon2.non2xx + round.argon2.errors}`,
    ],
  ])
}
