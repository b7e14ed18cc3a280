// Seeded, hostile requests on raw sockets at fleet mode's routes of the built server: the
// instances' polls, reports and leaves, and the people's list and removal. For every response: no
// 5xx, the documented body shape, no stack trace or path. After every batch: the process is up,
// logged no error, and the fleet lists exactly the instances the accepted requests made it know.
import fc from 'fast-check'
import { expect, it } from 'vitest'
import { responseProblems } from './fuzz-checks.js'
import { aimOf, type Bearer, fleetRequest, fleetRouteOf, wireOf } from './fuzz-fleet.js'
import { sendRaw } from './fuzz-raw-http.js'
import { FUZZ_FLEET, FUZZ_FLEET_DIGEST } from './fuzz-reports.js'
import { ADMIN, loginFor, useHostileUserDir, VIEWER } from './target-server.js'

/** Replay another run with FLOWADMIN_FUZZ_SEED=<n>. */
const SEED = Number(process.env.FLOWADMIN_FUZZ_SEED ?? 20_261_207)
const BATCHES = 30
const BATCH_SIZE = 50

const createUserDir = useHostileUserDir()
/** The documented instance ids: 1 to 128 letters, digits, ".", "_" or "-". */
const INSTANCE_ID = /^[A-Za-z0-9._-]{1,128}$/

it(`answers ${BATCHES * BATCH_SIZE} hostile requests at the fleet's routes without a 5xx, a leak or an instance it should not know`, async () => {
  const dir = await createUserDir({
    externalModules: { palette: { allowInstall: false } },
    fleet: { modules: true, hold: 5 },
    adminAuth: { resourceServers: [{ id: FUZZ_FLEET.id, secret: FUZZ_FLEET_DIGEST, fleet: true }] },
  })
  const { run, url } = await dir.start()
  const port = Number(new URL(url).port)
  const tokens: Record<Bearer, string> = {
    admin: await loginFor(url, ADMIN),
    viewer: await loginFor(url, VIEWER, 'read'),
    none: '',
    odd: 'not-a-token',
  }
  const listed = async (): Promise<string[]> => {
    const res = await fetch(`${url}/fleet/instances`, {
      headers: { authorization: `Bearer ${tokens.admin}` },
    })
    expect(res.status).toBe(200)
    return ((await res.json()) as Array<{ id: string }>).map((instance) => instance.id).sort()
  }
  const known = new Set<string>()
  const stderrAtStart = run.stderr
  const counts = { statuses: {} as Record<string, number>, joined: 0, forgotten: 0 }

  const batches = fc.sample(fc.array(fleetRequest, { minLength: BATCH_SIZE, maxLength: BATCH_SIZE }), {
    seed: SEED,
    numRuns: BATCHES,
  })
  for (const [b, batch] of batches.entries()) {
    for (const [i, request] of batch.entries()) {
      const { bytes, seen } = wireOf(request, tokens)
      const { route, id } = fleetRouteOf(request)
      const aim = aimOf(request)
      const outcome = await sendRaw({
        port,
        localAddress: `127.0.0.${2 + ((b * BATCH_SIZE + i) % 250)}`,
        method: request.method,
        bytes,
        timeoutMs: 15_000,
      })
      const problems = responseProblems(seen, route, outcome, bytes)
      const status = outcome.kind === 'response' ? outcome.response.status : outcome.kind
      const key = `${aim} ${status}`
      counts.statuses[key] = (counts.statuses[key] ?? 0) + 1
      // What the rules let change the fleet: an instance's accepted poll or report makes it known
      // (its id as the path names it); an operator's removal forgets it.
      if (id !== null && (aim === 'poll' || aim === 'report') && [200, 204, 304].includes(status as number)) {
        if (!INSTANCE_ID.test(id)) problems.push(`an instance "${id}" was accepted`)
        if (!known.has(id)) counts.joined++
        known.add(id)
      }
      if (id !== null && aim === 'forget' && status === 204) {
        if (request.bearer !== 'admin') problems.push('a removal without nodes.write was accepted')
        if (!known.delete(id)) problems.push(`removed "${id}", which the fleet did not know`)
        counts.forgotten++
      }
      if (problems.length > 0) {
        const preview = JSON.stringify(bytes.toString('latin1').slice(0, 500))
        const answer =
          outcome.kind === 'response'
            ? `${outcome.response.status} ${JSON.stringify(outcome.response.body.toString('latin1').slice(0, 500))}`
            : outcome.kind
        throw new Error(
          `fuzz seed ${SEED} (replay: FLOWADMIN_FUZZ_SEED=${SEED}), batch ${b}, request ${i} (${request.aim}):\n` +
            `  ${problems.join('\n  ')}\n  request: ${preview}\n  outcome: ${answer}`,
        )
      }
    }
    const where = `fuzz seed ${SEED}, after batch ${b}`
    expect(run.child.exitCode, where).toBeNull()
    expect(await listed(), where).toEqual([...known].sort())
    expect(run.stderr.slice(stderrAtStart.length), `${where}: unexpected errors logged`).toBe('')
  }
  console.info(`fleet fuzz seed ${SEED}: ${JSON.stringify(counts)}`)
  // The run must have reached what it claims to: instances that joined and were forgotten, and
  // refusals of every kind.
  expect(counts.joined).toBeGreaterThan(5)
  expect(counts.forgotten).toBeGreaterThan(2)
  for (const key of ['poll 200', 'poll 401', 'report 204', 'report 400', 'report 401', 'lease 204'])
    expect(counts.statuses[key] ?? 0, key).toBeGreaterThan(5)
}, 180_000)
