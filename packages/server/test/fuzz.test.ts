// Thousands of seeded, hostile requests on raw sockets against the built server (auth on,
// SQLite, a plain and a scoped module, flows that use a type, a resource server whose instances
// report audit events). For every response: no 5xx, the documented body shape, no stack trace or
// path. After every batch: the process is up, logged no error, wrote only JSON audit lines, its modules and tokens are exactly what the valid requests
// made them, and the trail holds exactly the events the reports it accepted carried.
import fc from 'fast-check'
import { expect, it } from 'vitest'
import { responseProblems } from './fuzz-checks.js'
import { type Holder, revokedBy, routeOf, toggleOf } from './fuzz-oracle.js'
import { headerOf, type RawOutcome, sendRaw } from './fuzz-raw-http.js'
import { FUZZ_FLEET, FUZZ_FLEET_DIGEST } from './fuzz-reports.js'
import { fuzzRequest } from './fuzz-requests.js'
import { type Tokens, toWire, VICTIMS } from './fuzz-wire.js'
import { ADMIN, enabledStates, loginFor, tokenStatus, useHostileUserDir, VIEWER } from './target-server.js'

/** Replay another run with FLOWADMIN_FUZZ_SEED=<n>. */
const SEED = Number(process.env.FLOWADMIN_FUZZ_SEED ?? 20_251_122)
const BATCHES = 60
const BATCH_SIZE = 50

const createUserDir = useHostileUserDir()

/** How many events the trail holds from the fleet's reports. */
async function reportedEvents(url: string, token: string): Promise<number> {
  const res = await fetch(`${url}/audit?instance=${FUZZ_FLEET.id}`, {
    headers: { authorization: `Bearer ${token}`, accept: 'application/x-ndjson' },
  })
  return (await res.text()).split('\n').filter((line) => line !== '').length
}

const preview = (bytes: Buffer) => JSON.stringify(bytes.toString('latin1').slice(0, 700))
const outcomeText = (outcome: RawOutcome) =>
  outcome.kind === 'response'
    ? `${outcome.response.status} ${JSON.stringify(outcome.response.headers)} ${preview(outcome.response.body)}`
    : `${outcome.kind} after ${preview(outcome.received)}`

it(`answers ${BATCHES * BATCH_SIZE} hostile requests without a 5xx, a leak or a change it should refuse`, async () => {
  // Installing and removing is refused here (npm would reach for the internet); every such
  // request must then change nothing. The palette tests install against a local registry.
  const dir = await createUserDir({
    externalModules: { palette: { allowInstall: false } },
    // The instances' resource server, whose reports (POST /audit/events) the fuzzer sends too.
    adminAuth: { resourceServers: [{ id: FUZZ_FLEET.id, secret: FUZZ_FLEET_DIGEST }] },
  })
  const { run, url } = await dir.start()
  const port = Number(new URL(url).port)

  const admin = await loginFor(url, ADMIN)
  const viewer = await loginFor(url, VIEWER, 'read')
  const dead = await loginFor(url, ADMIN)
  const victims = await Promise.all(Array.from({ length: VICTIMS }, () => loginFor(url, ADMIN)))
  const killed = await fetch(`${url}/auth/revoke`, {
    method: 'POST',
    headers: { authorization: `Bearer ${admin}` },
    body: new URLSearchParams({ token: dead }),
  })
  expect(killed.status).toBe(200)
  const tokens: Tokens = { admin, viewer, dead, victims }
  const revoked = new Set([dead])
  const holders = (token: string): Holder | null => {
    if (revoked.has(token)) return null
    if (token === viewer) return { username: VIEWER.username, all: false }
    return token === admin || victims.includes(token) ? { username: ADMIN.username, all: true } : null
  }
  const expected = await enabledStates(url, admin)
  const stderrAtStart = run.stderr

  const counts = {
    toggles: 0,
    changes: 0,
    revokes: 0,
    reported: 0,
    statuses: {} as Record<number | string, number>,
  }
  const batches = fc.sample(fc.array(fuzzRequest, { minLength: BATCH_SIZE, maxLength: BATCH_SIZE }), {
    seed: SEED,
    numRuns: BATCHES,
  })
  for (const [b, batch] of batches.entries()) {
    for (const [i, request] of batch.entries()) {
      const wire = toWire(request, tokens, port)
      const { seen } = wire
      const route = routeOf(seen.method, seen.target)
      const toggle = toggleOf(seen, holders)
      const revoke = revokedBy(seen, holders)
      const outcome = await sendRaw({
        port,
        localAddress: wire.localAddress,
        method: seen.method,
        bytes: wire.bytes,
        endAfterWrite: wire.endAfterWrite,
        timeoutMs: 10_000,
      })
      const problems = responseProblems(seen, route, outcome, wire.bytes)
      const status = outcome.kind === 'response' ? outcome.response.status : outcome.kind
      counts.statuses[status] = (counts.statuses[status] ?? 0) + 1

      if (toggle !== null) {
        counts.toggles++
        const want = toggle.refusedInUse ? 400 : 200
        if (status !== want) problems.push(`a valid toggle answered ${status}, not ${want}`)
        else if (
          want === 400 &&
          outcome.kind === 'response' &&
          !outcome.response.body.includes('type_in_use')
        ) {
          problems.push('the refusal is not type_in_use')
        }
        if (!toggle.refusedInUse) {
          for (const id of toggle.setIds) {
            if (expected[id] !== toggle.enabled) counts.changes++
            expected[id] = toggle.enabled
          }
        }
      } else if (seen.method === 'PUT' && typeof status === 'number' && status < 300) {
        problems.push(`a PUT the rules refuse answered ${status}`)
      }
      if (revoke !== null) {
        counts.revokes++
        if (status !== 200) problems.push(`a valid revoke answered ${status}`)
        const owner = holders(revoke.token)
        if (owner !== null && (revoke.holder.all || owner.username === revoke.holder.username)) {
          revoked.add(revoke.token)
        }
      } else if (route.kind === 'revoke' && status === 200) {
        problems.push('a revoke the rules refuse answered 200')
      }
      // What a report answered 200 kept: every one of its events, and nothing of any other.
      if (route.kind === 'report' && status === 200 && outcome.kind === 'response') {
        counts.reported += (
          JSON.parse(outcome.response.body.toString('utf8')) as { accepted: number }
        ).accepted
      }
      if (outcome.kind === 'response' && headerOf(outcome.response, 'access-control-allow-origin')) {
        problems.push('a CORS header')
      }

      if (problems.length > 0) {
        throw new Error(
          `fuzz seed ${SEED} (replay: FLOWADMIN_FUZZ_SEED=${SEED}), batch ${b}, request ${i} (${request.aim}):\n` +
            `  ${problems.join('\n  ')}\n  request: ${preview(wire.bytes)}\n  outcome: ${outcomeText(outcome)}`,
        )
      }
    }

    const where = `fuzz seed ${SEED}, after batch ${b}`
    expect(run.child.exitCode, where).toBeNull()
    expect((await fetch(`${url}/auth/login`)).status, where).toBe(200)
    expect(await enabledStates(url, admin), where).toEqual(expected)
    for (const token of [admin, viewer, dead, ...victims]) {
      expect(await tokenStatus(url, token), `${where}: token #${victims.indexOf(token)}`).toBe(
        revoked.has(token) ? 401 : 200,
      )
    }
    expect(await reportedEvents(url, admin), `${where}: events the reports kept`).toBe(counts.reported)
    expect(run.stderr.slice(stderrAtStart.length), `${where}: unexpected errors logged`).toBe('')
    for (const line of run.stdout.trim().split('\n').slice(1)) {
      expect(JSON.parse(line), `${where}: audit line ${line.slice(0, 200)}`).toMatchObject({
        event: expect.any(String),
      })
    }
  }

  console.info(`fuzz seed ${SEED}: ${JSON.stringify(counts)}`)
  // The run must have exercised what it claims to: valid toggles that changed state, revokes.
  expect(counts.changes).toBeGreaterThan(20)
  expect(counts.revokes).toBeGreaterThan(5)
  expect(counts.reported).toBeGreaterThan(100)
  expect(revoked.size).toBeGreaterThan(2)
}, 120_000)
