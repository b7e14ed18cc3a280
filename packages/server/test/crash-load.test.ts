// The built server under concurrent logins, revokes and toggles, each client loop on its own
// keep-alive connection, killed with SIGKILL at a seeded moment, then restarted on the same
// userDir, a few rounds. What it acknowledged before the kill must all be there after it.
import * as http from 'node:http'
import { createSeededNumbers } from '@flowadmin/testkit'
import { expect, it } from 'vitest'
import {
  ADMIN,
  enabledStates,
  GREETING,
  loginFor,
  TEXT_TOOLS,
  tokenStatus,
  useHostileUserDir,
} from './target-server.js'

/**
 * Fixes each round's kill point (a count of acknowledged operations) and the clients' choices;
 * the interleaving of the clients is the scheduler's. Another run: FLOWADMIN_CRASH_SEED=<n>.
 */
const SEED = Number(process.env.FLOWADMIN_CRASH_SEED ?? 5_150)
const ROUNDS = 5

const createUserDir = useHostileUserDir()

interface Answer {
  status: number
  body: string
}

/** One client on one keep-alive connection; `send` resolves null when no whole answer came. */
function client(url: string, counts: { reused: number }) {
  const { hostname, port } = new URL(url)
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  return {
    send(method: string, path: string, headers: Record<string, string>, body = ''): Promise<Answer | null> {
      return new Promise((resolve) => {
        const request = http.request(
          {
            hostname,
            port,
            path,
            method,
            agent,
            headers: { ...headers, 'content-length': Buffer.byteLength(body) },
          },
          (response) => {
            let text = ''
            response.setEncoding('utf8')
            response.on('data', (chunk: string) => {
              text += chunk
            })
            response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }))
            response.on('error', () => resolve(null))
          },
        )
        if (request.reusedSocket) counts.reused++
        request.on('error', () => resolve(null))
        request.end(body)
      })
    },
    close: () => agent.destroy(),
  }
}

const form = (fields: Record<string, string>) => ({
  headers: { 'content-type': 'application/x-www-form-urlencoded' },
  body: new URLSearchParams(fields).toString(),
})

it(`keeps every acknowledged login, revoke and toggle across ${ROUNDS} SIGKILLs under load`, async () => {
  const killPoints = createSeededNumbers(SEED)
  const random = createSeededNumbers(SEED + 1)
  const dir = await createUserDir({ auditLog: 'off' })
  let server = await dir.start()
  const operator = await loginFor(server.url, ADMIN)
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

  // What the clients were told. A token or node set whose last request got no answer is
  // uncertain: that request may or may not have landed, so it is only checked for being one of
  // the two possible states.
  const issued: string[] = []
  const doomed: string[] = []
  const revoked = new Set<string>()
  const revokeInFlight = new Set<string>()
  const acked = await enabledStates(server.url, operator)
  const inFlight = new Map<string, boolean>()
  const counts = { reused: 0, acks: 0, logins: 0, revokes: 0, toggles: 0, unanswered: 0 }

  for (let round = 0; round < ROUNDS; round++) {
    const { url, run } = server
    const killAfter = counts.acks + 30 + Math.floor(killPoints() * 120)
    // Toggles share commits and outpace logins many times over: the kill also waits for a few
    // logins and revokes of this round, so that every kind of write is caught by it.
    const roundStart = { logins: counts.logins, revokes: counts.revokes }
    let stopped = false
    // Only the kill may leave a request unanswered: `stopped` is set just before it.
    const unanswered = (answer: Answer | null): answer is null => {
      if (answer === null && !stopped)
        throw new Error(`round ${round}: a request got no answer before the kill`)
      return answer === null
    }
    const ack = () => {
      counts.acks++
      const mixed = counts.logins - roundStart.logins >= 4 && counts.revokes - roundStart.revokes >= 2
      if (!stopped && counts.acks >= killAfter && mixed) {
        stopped = true
        run.child.kill('SIGKILL')
      }
    }

    const loginLoop = async () => {
      const c = client(url, counts)
      while (!stopped) {
        const { headers, body } = form({
          client_id: 'service-admin',
          grant_type: 'password',
          scope: '*',
          username: ADMIN.username,
          password: ADMIN.password,
        })
        const answer = await c.send('POST', '/auth/token', headers, body)
        if (unanswered(answer)) continue
        expect(answer.status).toBe(200)
        const token = (JSON.parse(answer.body) as { access_token: string }).access_token
        issued.push(token)
        // About half of the tokens are revoked; the others must stay valid.
        if (random() < 0.5) doomed.push(token)
        counts.logins++
        ack()
      }
      c.close()
    }

    const revokeLoop = async () => {
      const c = client(url, counts)
      while (!stopped) {
        const token = doomed.shift()
        if (token === undefined) {
          // Nothing to revoke yet: ask something harmless meanwhile.
          await c.send('GET', '/auth/login', {})
          continue
        }
        // Half of them revoke themselves, the others are revoked by the operator.
        const self = random() < 0.5
        const { headers, body } = form({ token })
        revokeInFlight.add(token)
        const answer = await c.send(
          'POST',
          '/auth/revoke',
          { ...headers, ...bearer(self ? token : operator) },
          body,
        )
        if (unanswered(answer)) continue
        expect(answer.status).toBe(200)
        revokeInFlight.delete(token)
        revoked.add(token)
        counts.revokes++
        ack()
      }
      c.close()
    }

    // One loop per node set, so that each set's requests are sequential: the greeting module as a
    // whole (disabling it is refused: the flows use its type), the two scoped sets one by one.
    const toggleLoop = async (path: string, setIds: string[]) => {
      const c = client(url, counts)
      while (!stopped) {
        const enabled = random() < 0.5
        for (const id of setIds) inFlight.set(id, enabled)
        const json = JSON.stringify({ enabled })
        const answer = await c.send(
          'PUT',
          path,
          { 'content-type': 'application/json', ...bearer(operator) },
          json,
        )
        if (unanswered(answer)) continue
        expect(answer.status === 200 || (answer.status === 400 && answer.body.includes('type_in_use'))).toBe(
          true,
        )
        for (const id of setIds) {
          inFlight.delete(id)
          if (answer.status === 200) acked[id] = enabled
        }
        counts.toggles++
        ack()
      }
      c.close()
    }

    await Promise.all([
      loginLoop(),
      loginLoop(),
      revokeLoop(),
      toggleLoop(`/nodes/${GREETING}`, [`${GREETING}/greeting`]),
      toggleLoop(`/nodes/${TEXT_TOOLS}/upper`, [`${TEXT_TOOLS}/upper`]),
      toggleLoop(`/nodes/${encodeURIComponent(TEXT_TOOLS)}/lower`, [`${TEXT_TOOLS}/lower`]),
    ])
    expect(await run.exited).toBe('SIGKILL')
    counts.unanswered += inFlight.size + revokeInFlight.size

    server = await dir.start()
    const where = `crash seed ${SEED}, round ${round}`
    const states = await enabledStates(server.url, operator)
    for (const [id, enabled] of Object.entries(states)) {
      const possible = inFlight.has(id) ? [acked[id], inFlight.get(id)] : [acked[id]]
      expect(possible, `${where}: ${id}`).toContain(enabled)
      acked[id] = enabled
      inFlight.delete(id)
    }
    expect(await tokenStatus(server.url, operator), `${where}: the operator's token`).toBe(200)
    for (const token of issued) {
      const status = await tokenStatus(server.url, token)
      if (revokeInFlight.has(token)) {
        expect([200, 401], `${where}: a token whose revoke got no answer`).toContain(status)
        if (status === 401) revoked.add(token)
        revokeInFlight.delete(token)
      } else {
        expect(status, `${where}: ${revoked.has(token) ? 'a revoked' : 'an issued'} token`).toBe(
          revoked.has(token) ? 401 : 200,
        )
      }
    }
  }

  console.info(
    `crash seed ${SEED}: ${JSON.stringify({ ...counts, tokens: issued.length, revoked: revoked.size })}`,
  )
  // Each round did real work over reused connections before its kill.
  expect(counts.logins).toBeGreaterThan(ROUNDS * 3)
  expect(counts.revokes).toBeGreaterThan(ROUNDS)
  expect(counts.toggles).toBeGreaterThan(ROUNDS * 10)
  expect(counts.reused).toBeGreaterThan(counts.acks / 2)
}, 90_000)
