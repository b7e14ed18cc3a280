// The fleet-scale scenario: 1,000 lean agents (fleet-agents.mjs; 100 with --quick) hold polls on
// the built flowadmin in fleet mode, on SQLite, then split between two flowadmin instances sharing
// one throw-away PostgreSQL database. For each: how long a module change (PUT /nodes/:module, made
// at the first instance) takes to reach every agent, flowadmin's resident memory idle and with
// the polls held, its CPU over the idle fleet, and the introspection rate without and with the
// agents.
import { execFileSync, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { track } from './cleanup.mjs'
import { basicAuthorization } from './fleet.mjs'
import { startAgents } from './fleet-agents.mjs'
import { fleetScaleRows, fleetScaleTable, fleetScaleTargets } from './fleet-scale-report.mjs'
import { ARGON2_OPTIONS, argon2, FLOWADMIN_CLIENT, RESOURCE_SERVER } from './flowadmin.mjs'
import { percentile, waitForIdle } from './load.mjs'
import { createPostgresStorage } from './postgres.mjs'
import { cpuMs, memory } from './proc.mjs'
import { selfTime, within } from './profile.mjs'
import { introspections, login, resourceServerToken } from './scenarios.mjs'
import { createFlowadminTarget } from './targets.mjs'

export { fleetScaleRows, fleetScaleTargets }

const MODULE = 'node-red-contrib-bench-fleet-scale'
const CREDENTIALS = { username: 'admin', password: 'bench-password-0123' }
/** The report each agent sends when it joins: Node-RED 4.1 with the module, its one set enabled. */
const REPORT = {
  nodeRedVersion: '4.1.15',
  modules: [
    {
      name: MODULE,
      version: '1.0.0',
      sets: [{ name: 'bench', types: ['bench-fleet-scale'], enabled: true, loaded: true }],
    },
  ],
  typesInUse: [],
  applied: null,
  failures: [],
}
/**
 * Fleet mode with its default hold; a change's answer does not wait for the instances' outcomes
 * (`wait: 0`), which lean agents never report: the answer comes first, the agents' receipts follow.
 */
const FLEET = { modules: true, wait: 0 }
/** File descriptors flowadmin needs besides one per held poll. */
const SPARE_FDS = 200
const REACH_DEADLINE_MS = 30_000
const INTROSPECT_CONNECTIONS = 10
/** After every agent received a change, before the next: each is back in a held poll (its pause is 750 ms at most). */
const CHANGE_GAP_MS = 1000
/** The agents' mean pause between two polls. */
const MEAN_PAUSE_MS = 500
const FLOOR_SERVER = new URL('fleet-floor-server.mjs', import.meta.url).pathname

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))
const monotonicMs = () => Number(process.hrtime.bigint()) / 1e6

/**
 * Makes sure process `pid` may open `needed` files: its soft limit is raised up to its hard one
 * when lower (prlimit), and the scenario fails with what to do when even the hard limit is lower.
 */
function ensureOpenFiles(pid, needed) {
  const limits = () => {
    const line = readFileSync(`/proc/${pid}/limits`, 'utf8')
      .split('\n')
      .find((text) => text.startsWith('Max open files'))
    const [soft, hard] = (line?.split(/\s{2,}/) ?? [])
      .slice(1, 3)
      .map((value) => (value === 'unlimited' ? Number.POSITIVE_INFINITY : Number(value)))
    return { soft, hard }
  }
  const { soft, hard } = limits()
  if (soft >= needed) return
  const fail = (why) =>
    new Error(
      `flowadmin (pid ${pid}) may open ${soft} files (ulimit -n; hard limit ${hard}), and holds ${needed} here: ${why}. ` +
        `Raise the limit (ulimit -n ${needed} in the shell that runs the bench, or LimitNOFILE=) and run again`,
    )
  if (hard < needed) throw fail('the hard limit is lower')
  try {
    execFileSync('prlimit', ['--pid', String(pid), `--nofile=${hard}:${hard}`], { stdio: 'ignore' })
  } catch (error) {
    throw fail(`prlimit could not raise it (${error.message})`)
  }
  if (limits().soft < needed) throw fail('prlimit could not raise it')
}

/** Introspections at every server at once (the connections split between them): answers per second in all. */
async function introspectAll(servers, token, { durationMs, warmupMs }) {
  const connections = Math.max(1, Math.floor(INTROSPECT_CONNECTIONS / servers.length))
  const run = (ms) =>
    Promise.all(servers.map((instance) => introspections({ instance, token, durationMs: ms, connections })))
  await run(warmupMs)
  for (const server of servers) await waitForIdle(server.pid)
  const results = await run(durationMs)
  const bad = results.reduce((sum, result) => sum + result.non2xx + result.errors, 0)
  if (bad > 0) throw new Error(`${bad} introspections were not answered 200`)
  return results.reduce((sum, result) => sum + result.rps, 0)
}

/** PUT /nodes/:module as the admin; resolves with the times (monotonic ms) it was sent and answered. */
async function changeModule(server, token, enabled) {
  const sent = monotonicMs()
  const response = await fetch(`${server.url}/nodes/${MODULE}`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ enabled }),
    signal: AbortSignal.timeout(30_000),
  })
  const text = await response.text()
  const answered = monotonicMs()
  if (response.status !== 200) throw new Error(`PUT /nodes/${MODULE} answered ${response.status} ${text}`)
  return { sent, answered }
}

/** How many instances flowadmin lists as connected. */
async function connectedCount(server, token) {
  const response = await fetch(`${server.url}/fleet/instances`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(30_000),
  })
  if (response.status !== 200) throw new Error(`GET /fleet/instances answered ${response.status}`)
  return (await response.json()).filter((instance) => instance.connected).length
}

const summary = (values) => {
  const sorted = Float64Array.from(values).sort()
  return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99), max: sorted.at(-1) ?? Number.NaN }
}

/** `count` agents joined to `servers` (named `${prefix}-<n>`): reports sent, polls held. */
const joinAgents = (servers, count, prefix) =>
  startAgents({ servers, count, prefix, authorization: basicAuthorization(RESOURCE_SERVER), report: REPORT })

/**
 * The idle fleet: polls held and renewed, nothing changes, for `windowMs` (null: two of the
 * agents' rounds, so that every agent polls twice). The CPU of each of `pids` and the agents' own,
 * as % of one core, the polls per second, and the window (`from`, `to`: monotonic ms).
 */
async function idleWindow(fleet, pids, windowMs) {
  const idleMs = windowMs ?? 2 * (fleet.hold * 1000 + MEAN_PAUSE_MS)
  const polls = (await fleet.stats()).polls
  const servers = pids.map(cpuMs)
  const agents = fleet.pids.map(cpuMs)
  const from = monotonicMs()
  await sleep(idleMs)
  const to = monotonicMs()
  const pct = (ms) => (100 * ms) / (to - from)
  return {
    from,
    to,
    elapsedMs: to - from,
    cpuPct: pids.map((pid, i) => pct(cpuMs(pid) - servers[i])),
    agentsCpuPct: pct(fleet.pids.reduce((sum, pid, i) => sum + cpuMs(pid) - agents[i], 0)),
    pollsPerSecond: (((await fleet.stats()).polls - polls) * 1000) / (to - from),
  }
}

/**
 * One fleet on `servers` (started, the change made at the first): introspection without agents,
 * memory idle, `agents` agents joined, memory with their polls held, CPU over `idleWindowMs`
 * (null: two of the agents' rounds), introspection with them, then `changes` changes of the
 * module (the first decides it), each until every agent received it, and introspection once
 * they left.
 */
async function measureFleet(servers, { agents, prefix, changes, idleWindowMs, durationMs, warmupMs, log }) {
  const pids = servers.map((server) => server.pid)
  for (const pid of pids) ensureOpenFiles(pid, Math.ceil(agents / servers.length) + SPARE_FDS)
  const [first] = servers
  const target = { name: 'flowadmin', clientId: FLOWADMIN_CLIENT }
  const token = await login({ instance: first, target, credentials: CREDENTIALS })
  const rsToken = await resourceServerToken({ instance: first, credentials: CREDENTIALS })
  const introspectBefore = await introspectAll(servers, rsToken, { durationMs, warmupMs })
  for (const pid of pids) await waitForIdle(pid)
  await sleep(250)
  const rssIdleMb = pids.map((pid) => memory(pid).rssMb)

  const joinStart = performance.now()
  const fleet = await joinAgents(servers, agents, prefix)
  try {
    const joinMs = performance.now() - joinStart
    // The leases of the polls' starts are written in batches; the reports' writes are done.
    await sleep(1500)
    const connected = await connectedCount(first, token)
    if (connected !== agents) log(`fleet-scale: ${connected} of ${agents} agents listed connected`)
    for (const pid of pids) await waitForIdle(pid, { maxMs: 5000 })
    const rssHeldMb = pids.map((pid) => memory(pid).rssMb)

    const idle = await idleWindow(fleet, pids, idleWindowMs)

    const introspectWith = await introspectAll(servers, rsToken, { durationMs, warmupMs })

    // The first change decides the module (it was only reported) while the agents poll out of step,
    // as after the idle window; the others follow a second after every agent received the last,
    // each agent then holding a poll: the largest burst of answers.
    let [old] = fleet.versions
    const fromAnswer = []
    const fromSend = []
    const putMs = []
    const perChange = []
    let missing = 0
    for (let i = 0; i < changes; i++) {
      if (i > 0) await sleep(CHANGE_GAP_MS)
      const change = await changeModule(first, token, i % 2 === 0)
      const reached = await fleet.reach({ after: change.sent, old, deadlineMs: REACH_DEADLINE_MS })
      if (reached.missing === 0 && reached.versions.length === 1) [old] = reached.versions
      putMs.push(change.answered - change.sent)
      missing += reached.missing
      perChange.push(summary(reached.times.map((at) => at - change.answered)))
      for (const at of reached.times) {
        fromAnswer.push(at - change.answered)
        fromSend.push(at - change.sent)
      }
    }
    const after = await fleet.stats()
    // Introspection without the agents again, once they left: the two windows without them
    // surround the one with them, so the machine's drift weighs on both sides.
    await fleet.stop()
    for (const pid of pids) await waitForIdle(pid, { maxMs: 5000 })
    const introspectAfter = await introspectAll(servers, rsToken, { durationMs, warmupMs })
    const introspectWithout = (introspectBefore + introspectAfter) / 2
    const result = {
      agents,
      instances: servers.length,
      joinMs,
      connected,
      changes,
      delivery: { ...summary(fromAnswer), missing, samples: fromAnswer.length },
      fromSend: summary(fromSend),
      perChange,
      putMs: summary(putMs),
      rssIdleMb,
      rssHeldMb,
      growthMb: Math.max(...rssHeldMb.map((held, i) => held - rssIdleMb[i])),
      idleMs: idle.elapsedMs,
      idleCpuPct: idle.cpuPct,
      agentsCpuPct: idle.agentsCpuPct,
      idlePollsPerSecond: idle.pollsPerSecond,
      introspect: {
        without: introspectWithout,
        with: introspectWith,
        ratio: introspectWith / introspectWithout,
      },
      pollErrors: after.errors,
      pollFailures: after.failures,
      pollStatuses: after.statuses,
    }
    // The arrivals, for combining rounds; not written to the figures file.
    Object.defineProperty(result, 'latencies', { value: { fromAnswer, fromSend }, enumerable: false })
    return result
  } finally {
    await fleet.stop()
  }
}

/**
 * The floor: the same agents on a raw node:http server that holds their polls with nothing behind
 * (fleet-floor-server.mjs), its CPU over the idle window as flowadmin's is measured.
 */
async function measureFloor({ agents, idleWindowMs }) {
  const child = track(spawn(process.execPath, [FLOOR_SERVER], { stdio: ['ignore', 'pipe', 'inherit'] }))
  try {
    const port = await new Promise((resolve, reject) => {
      child.stdout.setEncoding('utf8').once('data', (line) => resolve(Number(/:(\d+)/.exec(line)?.[1])))
      child.once('exit', (code) => reject(new Error(`the floor server exited (${code})`)))
    })
    ensureOpenFiles(child.pid, agents + SPARE_FDS)
    const fleet = await joinAgents([{ port }], agents, 'floor')
    try {
      await sleep(1500)
      const idle = await idleWindow(fleet, [child.pid], idleWindowMs)
      return { idleCpuPct: idle.cpuPct[0], idlePollsPerSecond: idle.pollsPerSecond }
    } finally {
      await fleet.stop()
    }
  } finally {
    child.kill()
  }
}

/**
 * The scenario, for run.mjs's local scenarios. `quick`: 100 agents, a 2 s idle window and three
 * changes, so the CI smoke stays cheap.
 */
export function createFleetScaleScenario({ quick, log, serverEnv = {} }) {
  const agents = quick ? 100 : 1000
  const changes = quick ? 3 : 7
  /** The idle window: two of the agents' rounds (null), or 2 s for the smoke. */
  const idleWindowMs = quick ? 2000 : null
  /** What every start of flowadmin takes: the bench user, the resource server, the build measured. */
  const prepare = async (root, folder) => {
    const passwordHash = await argon2.hash(CREDENTIALS.password, ARGON2_OPTIONS)
    // The fleet's secret as `flowadmin secret` gives it (a digest): a password hash would be
    // verified once per start, and a thousand agents joining at once would be shed meanwhile.
    const digest = createHash('sha256').update(RESOURCE_SERVER.secret).digest('hex')
    return {
      common: { root: folder, serverRoot: root, serverEnv, username: CREDENTIALS.username, passwordHash },
      resourceServers: [{ id: RESOURCE_SERVER.id, secret: `sha256:${digest}`, fleet: true }],
    }
  }
  return {
    id: 'fleet-scale',
    title: `Fleet mode at scale: ${agents} agents holding polls, on one flowadmin (SQLite), then split between two on one PostgreSQL`,
    local: true,
    async measure({ root, folder, durationMs, warmupMs, pgUrl }) {
      const { common, resourceServers } = await prepare(root, folder)
      const options = { agents, changes, idleWindowMs, durationMs, warmupMs, log }

      const single = await createFlowadminTarget({ ...common, settings: { fleet: FLEET } }).start({
        resourceServers,
      })
      let one
      try {
        one = await measureFleet([single], { ...options, prefix: 'one' })
      } finally {
        await single.stop()
      }

      let two
      const storage = await createPostgresStorage({ serverUrl: pgUrl, root }).catch((error) => ({ error }))
      if (storage.error) {
        two = { error: `cannot reach ${pgUrl}: ${storage.error.message}` }
      } else {
        try {
          const target = createFlowadminTarget({ ...common, postgres: storage, settings: { fleet: FLEET } })
          const a = await target.start({ resourceServers })
          try {
            const b = await a.startPeer()
            two = await measureFleet([a, b], { ...options, prefix: 'two' })
          } finally {
            await a.stop()
          }
        } finally {
          await storage.close()
        }
      }
      return { one, two, floor: await measureFloor({ agents, idleWindowMs }) }
    },
    describe: ({ one, two }) =>
      [one, two]
        .map((fleet) =>
          fleet.error
            ? fleet.error
            : `${fleet.instances} instance(s): p99 ${fleet.delivery.p99.toFixed(0)} ms, +${fleet.growthMb.toFixed(1)} MB, ` +
              `idle ${Math.max(...fleet.idleCpuPct).toFixed(2)} % of a core, introspection ${fleet.introspect.ratio.toFixed(2)}×`,
        )
        .join('; '),
    /**
     * With --cpu-prof: one more fleet on one instance with the profiler on, the agents joined, then
     * an idle window; the profile's top frames over that window alone, whose samples are also
     * written apart (`….idle.cpuprofile`).
     */
    async profile({ root, folder, cpuProfDir }) {
      const { common, resourceServers } = await prepare(root, folder)
      const before = new Set(readdirSync(cpuProfDir))
      const target = createFlowadminTarget({ ...common, cpuProfDir, settings: { fleet: FLEET } })
      const server = await target.start({ resourceServers, profile: true })
      let idle
      try {
        ensureOpenFiles(server.pid, agents + SPARE_FDS)
        const fleet = await joinAgents([server], agents, 'profiled')
        try {
          await sleep(1500)
          idle = await idleWindow(fleet, [server.pid], idleWindowMs)
        } finally {
          await fleet.stop()
        }
      } finally {
        await server.stop()
      }
      const written = readdirSync(cpuProfDir).filter(
        (name) => !before.has(name) && name.endsWith('.cpuprofile'),
      )
      if (written.length === 0) return null
      const whole = join(cpuProfDir, written.sort().at(-1))
      const profile = within(JSON.parse(readFileSync(whole, 'utf8')), idle.from * 1000, idle.to * 1000)
      // The idle window's profile beside the whole one, for DevTools.
      const file = whole.replace(/\.cpuprofile$/, '.idle.cpuprofile')
      writeFileSync(file, JSON.stringify(profile))
      const { totalMs, byFunction, byPlace } = selfTime(profile)
      return {
        file,
        totalMs,
        idleMs: idle.elapsedMs,
        byFunction: byFunction.slice(0, 15),
        byPlace: byPlace.slice(0, 10),
      }
    },
    combine: (rounds) => ({ kind: 'fleet-scale', rounds: rounds.length, ...combineRounds(rounds) }),
    table: fleetScaleTable,
  }
}

/** Rounds as one: arrivals merged, memory and CPU at their worst, introspection ratios' mean. */
function combineRounds(rounds) {
  const merge = (key) => {
    const fleets = rounds.map((round) => round[key]).filter((fleet) => fleet && !fleet.error)
    if (fleets.length === 0) return rounds.find((round) => round[key]?.error)?.[key] ?? null
    const all = (get) => fleets.flatMap(get)
    const worst = (get) => Math.max(...fleets.map(get))
    const mean = (get) => fleets.reduce((sum, fleet) => sum + get(fleet), 0) / fleets.length
    const arrivals = (which) => all((fleet) => fleet.latencies?.[which] ?? [])
    const fromAnswer = arrivals('fromAnswer')
    return {
      ...fleets[0],
      delivery: {
        ...(fromAnswer.length > 0 ? summary(fromAnswer) : fleets[0].delivery),
        missing: fleets.reduce((sum, fleet) => sum + fleet.delivery.missing, 0),
        samples: fromAnswer.length,
      },
      fromSend: fromAnswer.length > 0 ? summary(arrivals('fromSend')) : fleets[0].fromSend,
      changes: fleets.reduce((sum, fleet) => sum + fleet.changes, 0),
      rssIdleMb: fleets[0].rssIdleMb.map((_, i) => worst((fleet) => fleet.rssIdleMb[i])),
      rssHeldMb: fleets[0].rssHeldMb.map((_, i) => worst((fleet) => fleet.rssHeldMb[i])),
      growthMb: worst((fleet) => fleet.growthMb),
      idleCpuPct: fleets[0].idleCpuPct.map((_, i) => worst((fleet) => fleet.idleCpuPct[i])),
      agentsCpuPct: mean((fleet) => fleet.agentsCpuPct),
      idlePollsPerSecond: mean((fleet) => fleet.idlePollsPerSecond),
      introspect: {
        without: mean((fleet) => fleet.introspect.without),
        with: mean((fleet) => fleet.introspect.with),
        ratio: mean((fleet) => fleet.introspect.ratio),
      },
      pollErrors: fleets.reduce((sum, fleet) => sum + fleet.pollErrors, 0),
      pollFailures: fleets.reduce((all, fleet) => {
        for (const [why, n] of Object.entries(fleet.pollFailures ?? {})) all[why] = (all[why] ?? 0) + n
        return all
      }, {}),
    }
  }
  const floors = rounds.map((round) => round.floor).filter(Boolean)
  const floor =
    floors.length === 0
      ? null
      : {
          idleCpuPct: Math.max(...floors.map((one) => one.idleCpuPct)),
          idlePollsPerSecond: floors.reduce((sum, one) => sum + one.idlePollsPerSecond, 0) / floors.length,
        }
  return { one: merge('one'), two: merge('two'), floor }
}
