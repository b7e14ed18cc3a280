// `pnpm bench [--peer node-red] [--duration S] [--quick] ...`: loads the built flowadmin server (and
// Node-RED beside it, alternately) scenario by scenario, prints a table per scenario and the
// targets, and writes every figure to bench-results/<timestamp>.json.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { trackFolder } from './cleanup.mjs'
import { writeDocs } from './docs.mjs'
import { createFleetScenario } from './fleet-modules.mjs'
import {
  ARGON2_OPTIONS,
  argon2,
  checkBuilt,
  measureArgon2Floor,
  RESOURCE_SERVER,
  repositoryRoot,
} from './flowadmin.mjs'
import { waitForIdle } from './load.mjs'
import { bcryptHash, installNodeRed, NODE_RED_VERSION } from './node-red.mjs'
import { createPostgresStorage, createTwoInstanceScenarios, DEFAULT_PG } from './postgres.mjs'
import { machine, memory } from './proc.mjs'
import { selfTime } from './profile.mjs'
import {
  combine,
  combineLocal,
  evaluateTargets,
  growthTable,
  localTable,
  scenarioTable,
  targetsTable,
} from './report.mjs'
import { createScenarios, fleetLoad, login, recordRoutes, strip } from './scenarios.mjs'
import {
  BENCH_MODULES,
  createBaselineTarget,
  createFlowadminTarget,
  createNodeRedHelperTarget,
  createNodeRedTarget,
} from './targets.mjs'
import { versions } from './versions.mjs'

const HELP = `Usage: pnpm bench [options]
  --peer node-red     also run every scenario against Node-RED ${NODE_RED_VERSION}, alternately, with ratios
  --duration S        measured seconds per scenario, target and round (default 3; --quick 1)
  --warmup S          warm-up seconds before each measurement (default 1; --quick 0.3)
  --rounds N          rounds per scenario, A B A B ... (default 2; --quick 1)
  --sessions A,B      live-session counts for the growth scenarios (default 10000,100000)
  --storm-rate N      authenticated GETs per second during the login storm (default 200)
  --fleet-clients N   resource servers (Node-RED instances) in the fleet scenarios (default 200; --quick 50)
  --fleet-rate N      introspections per second the whole fleet sends (default 2000; --quick 250)
  --only ID,ID        run only these scenarios (ids: start sqlite-commits trail login-page healthz settings
                      introspect nr-flows settings-1 toggle-1 toggle-10 login logins-100 revoke login-N
                      revoke-N fleet storm fleet-modules; with --storage postgres also fleet-2i
                      propagation login-2i toggle-2i)
  --cpu-prof DIR      after each scenario's measured rounds, one more flowadmin round with the V8
                      CPU profiler on, its profile written into DIR and its top frames reported
                      (the figures come from the unprofiled rounds; for nr-flows, the flowadmin
                      behind the helper with cacheMs 0)
  --server DIR        measure the build in another checkout of flowadmin (default: this one)
  --server-env K=V    set an environment variable for the flowadmin processes only (repeatable)
  --storage S         flowadmin's store: sqlite (default) or postgres; with postgres every start gets a
                      database of its own, the scenarios fleet-2i, propagation, login-2i and toggle-2i run
                      two instances on one, and settings, introspect and fleet also run flowadmin on
                      SQLite beside it (flowadmin-sqlite; "fa ÷ sqlite" is PostgreSQL ÷ SQLite)
  --pg URL            the PostgreSQL server for --storage postgres (default: FLOWADMIN_TEST_PG, else
                      ${DEFAULT_PG}); databases are created on it and dropped
  --docs              write docs/benchmarks.md from this run (bench/docs.mjs)
  --quick             a short smoke run
Only 127.0.0.1 is loaded. Needs a build (pnpm bench builds first).`

const { values: args } = parseArgs({
  options: {
    peer: { type: 'string' },
    duration: { type: 'string' },
    warmup: { type: 'string' },
    rounds: { type: 'string' },
    sessions: { type: 'string' },
    'storm-rate': { type: 'string' },
    'fleet-clients': { type: 'string' },
    'fleet-rate': { type: 'string' },
    only: { type: 'string' },
    'cpu-prof': { type: 'string' },
    server: { type: 'string' },
    'server-env': { type: 'string', multiple: true },
    storage: { type: 'string', default: 'sqlite' },
    pg: { type: 'string' },
    quick: { type: 'boolean', default: false },
    docs: { type: 'boolean', default: false },
    help: { type: 'boolean', default: false },
  },
})
if (args.help) {
  console.log(HELP)
  process.exit(0)
}
if (args.peer !== undefined && args.peer !== 'node-red') usage(`unknown peer "${args.peer}" (only node-red)`)
if (args.storage !== 'sqlite' && args.storage !== 'postgres') usage(`--storage must be sqlite or postgres`)

const number = (value, fallback, name) => {
  if (value === undefined) return fallback
  const n = Number(value)
  if (!Number.isFinite(n) || n <= 0) usage(`--${name} must be a positive number`)
  return n
}
const quick = args.quick
const options = {
  durationS: number(args.duration, quick ? 1 : 3, 'duration'),
  warmupS: number(args.warmup, quick ? 0.3 : 1, 'warmup'),
  rounds: Math.round(number(args.rounds, quick ? 1 : 2, 'rounds')),
  sessionSizes: (args.sessions ?? (quick ? '1000,5000' : '10000,100000')).split(',').map((s) => {
    const n = Number(s)
    if (!Number.isInteger(n) || n <= 0) usage('--sessions takes positive whole numbers, e.g. 10000,100000')
    return n
  }),
  stormRate: number(args['storm-rate'], 200, 'storm-rate'),
  fleet: {
    clients: Math.round(number(args['fleet-clients'], quick ? 50 : 200, 'fleet-clients')),
    rate: number(args['fleet-rate'], quick ? 250 : 2000, 'fleet-rate'),
  },
  // Tokens to revoke: enough for warm-up + window at each server's pace, so the window rarely ends early.
  pools: quick ? { flowadmin: 5000, 'node-red': 500 } : { flowadmin: 12_000, 'node-red': 2500 },
  peer: args.peer ?? null,
  only: args.only ? new Set(args.only.split(',')) : null,
}

function usage(message) {
  console.error(`bench: ${message}\n\n${HELP}`)
  process.exit(2)
}

const log = (message) => process.stderr.write(`${message}\n`)
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** The PostgreSQL databases of a `--storage postgres` run. */
let postgres = null
/** The bench's resource server ({id, secret, hash}) when a scenario of the run needs one. */
let resourceServer = null

async function main() {
  const serverRoot = args.server ? pathToFileURL(`${resolve(args.server)}/`) : repositoryRoot
  checkBuilt(serverRoot)
  if (args.server) log(`flowadmin: the build in ${serverRoot.pathname}`)
  const serverEnv = Object.fromEntries(
    (args['server-env'] ?? []).map((pair) => {
      const at = pair.indexOf('=')
      if (at <= 0) usage(`--server-env takes NAME=VALUE, not "${pair}"`)
      return [pair.slice(0, at), pair.slice(at + 1)]
    }),
  )
  const host = machine()
  log(
    `machine: ${host.cpus} × ${host.model}, ${host.memGb} GB, Node ${host.node}, load ${host.loadavg.join(' ')}`,
  )
  if (host.loadavg[0] >= 0.5)
    log('note: the load average is 0.5 or more: something else is running, figures will be noisy')

  const credentials = { username: 'admin', password: 'bench-password-0123' }
  const work = trackFolder(mkdtempSync(join(tmpdir(), 'flowadmin-bench-')))
  const cpuProfDir = args['cpu-prof'] ? resolve(args['cpu-prof']) : null
  if (cpuProfDir) mkdirSync(cpuProfDir, { recursive: true })
  postgres =
    args.storage === 'postgres'
      ? await createPostgresStorage({
          serverUrl: args.pg ?? (process.env.FLOWADMIN_TEST_PG || DEFAULT_PG),
          root: serverRoot,
        })
      : null
  const all = [
    ...createScenarios(options),
    ...(postgres
      ? createTwoInstanceScenarios({
          modules: BENCH_MODULES,
          fleet: options.fleet,
          fleetLoad,
          pools: options.pools,
        })
      : []),
    ...(postgres ? [] : [createFleetScenario({ quick, log })]),
  ]
  const scenarios = all.filter((s) => !options.only || options.only.has(s.id))
  if (scenarios.length === 0) usage('--only matched no scenario')
  const named = new Set(scenarios.flatMap((s) => s.targets ?? []))
  // The resource server's secret as flowadmin's settings hold it: `flowadmin hash-pw`'s hash.
  resourceServer =
    scenarios.some((s) => s.resourceServers) || named.has('nr-fa-cache0') || named.has('nr-fa-cache1000')
      ? {
          ...RESOURCE_SERVER,
          hash: await (await import('@flowadmin/server')).hashPassword(RESOURCE_SERVER.secret),
        }
      : null
  const flowadmin = createFlowadminTarget({
    postgres,
    root: work,
    serverRoot,
    serverEnv,
    username: credentials.username,
    passwordHash: await argon2.hash(credentials.password, ARGON2_OPTIONS),
    cpuProfDir,
  })
  const targets = [flowadmin]
  if (postgres) {
    // flowadmin on SQLite beside, in the scenarios that compare the stores (besideSqlite, or named).
    targets.push(
      createFlowadminTarget({
        name: 'flowadmin-sqlite',
        namedOnly: true,
        root: work,
        serverRoot,
        serverEnv,
        username: credentials.username,
        passwordHash: await argon2.hash(credentials.password, ARGON2_OPTIONS),
        cpuProfDir: null,
      }),
    )
  }
  const nodeRedNamed = ['nr-own', 'nr-fa-cache0', 'nr-fa-cache1000'].some((name) => named.has(name))
  const redJs = options.peer === 'node-red' || nodeRedNamed ? await installNodeRed(log) : null
  const nodeRedHash = redJs ? bcryptHash(credentials.password, redJs) : null
  if (options.peer === 'node-red') {
    targets.push(
      createNodeRedTarget({ root: work, username: credentials.username, passwordHash: nodeRedHash, redJs }),
    )
  }
  if (nodeRedNamed) {
    // Node-RED with its own tokens, and with flowadmin's through @flowadmin/node-red: for the
    // scenarios that name them, whatever --peer says.
    targets.push(
      createNodeRedTarget({
        name: 'nr-own',
        namedOnly: true,
        root: work,
        username: credentials.username,
        passwordHash: nodeRedHash,
        redJs,
      }),
    )
    for (const cacheMs of [0, 1000]) {
      targets.push(
        createNodeRedHelperTarget({
          name: `nr-fa-cache${cacheMs}`,
          root: work,
          serverRoot,
          redJs,
          flowadmin,
          resourceServer,
          cacheMs,
        }),
      )
    }
  }

  /** The targets a scenario runs against: those it names, or all but those run only when named. */
  const targetsOf = (scenario) =>
    scenario.targets
      ? targets.filter((target) => scenario.targets.includes(target.name))
      : targets.filter(
          (target) => !target.namedOnly || (scenario.besideSqlite && target.name === 'flowadmin-sqlite'),
        )
  if (scenarios.some((s) => s.baselines)) {
    // The baselines answer flowadmin's own bodies and headers, recorded from it in this run.
    const routesFile = join(work, 'routes.json')
    const instance = await targets[0].start()
    try {
      const token = await login({ instance, target: targets[0], credentials })
      writeFileSync(routesFile, JSON.stringify(await recordRoutes(instance, token)))
    } finally {
      await instance.stop()
    }
    for (const kind of ['hono', 'node-http'])
      targets.push(createBaselineTarget({ kind, root: work, routesFile }))
  }
  const results = {}
  const report = { scenarios: [] }
  const floors = []
  let output = ''
  const durationMs = options.durationS * 1000
  const warmupMs = options.warmupS * 1000
  const startedAt = new Date()

  for (const scenario of scenarios) {
    if (scenario.local) {
      const measured = []
      for (let round = 1; round <= options.rounds; round++) {
        const result = await scenario.measure({
          root: serverRoot,
          folder: work,
          durationMs,
          quick: Boolean(quick),
          pgUrl: args.pg ?? (process.env.FLOWADMIN_TEST_PG || DEFAULT_PG),
        })
        measured.push(result)
        log(`${scenario.id} round ${round}: ${scenario.describe(result)}`)
      }
      const combined = { local: (scenario.combine ?? combineLocal)(measured) }
      results[scenario.id] = combined
      const table = scenario.table
        ? scenario.table(scenario, combined.local, { durationS: options.durationS, rounds: options.rounds })
        : scenario.rows
          ? [
              `\n## ${scenario.title}  [${scenario.id}; ${options.rounds} round(s)]`,
              ...scenario.rows(combined.local).map(([label, value]) => `${label.padEnd(60)} ${value}`),
            ].join('\n')
          : localTable(scenario, combined.local, {
              durationS: options.durationS,
              rounds: options.rounds,
            })
      console.log(table)
      output += `${table}\n`
      report.scenarios.push({ id: scenario.id, title: scenario.title, rounds: { local: measured }, combined })
      continue
    }
    const rounds = Object.fromEntries(targets.map((target) => [target.name, []]))
    const scenarioFloors = []
    const scenarioTargets = targetsOf(scenario).filter((target) => !target.baseline || scenario.baselines)
    for (let round = 1; round <= options.rounds; round++) {
      if (scenario.floor) {
        const floor = await measureArgon2Floor({ durationMs })
        scenarioFloors.push(floor)
        log(`${scenario.id} round ${round}: argon2id floor ${floor.perSecond.toFixed(1)}/s`)
      }
      for (const target of scenarioTargets) {
        if (scenario.peers && !target.startPeer) continue
        const result = await measure(scenario, target, { credentials, durationMs, warmupMs })
        rounds[target.name].push(result)
        log(
          result.starts
            ? `${scenario.id} round ${round} ${target.name}: listening after ${result.starts.map((ms) => ms.toFixed(0)).join(', ')} ms`
            : `${scenario.id} round ${round} ${target.name}: ${result.rps.toFixed(1)} req/s, p99 ${result.p99.toFixed(2)} ms` +
                (result.non2xx + result.errors > 0
                  ? `, ${result.non2xx} non-2xx, ${result.errors} errors`
                  : ''),
        )
      }
    }
    const combined = {}
    for (const target of scenarioTargets) {
      combined[target.name] = rounds[target.name].length > 0 ? combine(rounds[target.name]) : null
    }
    results[scenario.id] = combined
    const profiled = scenarioTargets.find((t) => t.name === (scenario.profileTarget ?? 'flowadmin'))
    const profile =
      cpuProfDir && profiled
        ? await profileRound(scenario, profiled, { credentials, durationMs, warmupMs, cpuProfDir })
        : null
    const floor = scenarioFloors.length
      ? {
          perSecond: scenarioFloors.reduce((s, f) => s + f.perSecond, 0) / scenarioFloors.length,
          concurrency: scenarioFloors[0].concurrency,
          rounds: scenarioFloors,
        }
      : null
    if (floor) floors.push(floor)
    const table = scenarioTable(scenario, combined, {
      floor,
      durationS: options.durationS,
      rounds: options.rounds,
    })
    console.log(table)
    output += `${table}\n`
    report.scenarios.push({
      id: scenario.id,
      title: scenario.title,
      ...(scenario.ratioTo ? { ratioTo: scenario.ratioTo } : {}),
      ...(scenario.paired ? { paired: scenario.paired } : {}),
      ...(scenario.peerCpu ? { peerCpu: scenario.peerCpu } : {}),
      argon2Floor: floor,
      rounds: Object.fromEntries(Object.entries(rounds).map(([name, list]) => [name, list.map(strip)])),
      combined: Object.fromEntries(Object.entries(combined).map(([name, c]) => [name, c && strip(c)])),
      profile,
    })
  }

  const names = targets.filter((t) => !t.baseline && !t.namedOnly).map((t) => t.name)
  const growth = growthTable(results, options.sessionSizes, names)
  const floor = floors[0] ?? null
  const evaluated = evaluateTargets(results, { floor, sessionSizes: options.sessionSizes })
  const summary = `${growth}\n${targetsTable(evaluated)}`
  console.log(summary)

  const finishedAt = new Date()
  const folder = new URL('bench-results/', repositoryRoot)
  mkdirSync(folder, { recursive: true })
  const file = new URL(`${startedAt.toISOString().replace(/[:.]/g, '-')}.json`, folder)
  const json = {
    command: `pnpm bench ${process.argv.slice(2).join(' ')}`.trim(),
    startedAt,
    finishedAt,
    machine: { ...host, loadavgAtEnd: machine().loadavg },
    versions: versions({ serverRoot, nodeRed: redJs ? NODE_RED_VERSION : null }),
    options: { ...options, only: options.only && [...options.only] },
    server: serverRoot.pathname,
    serverEnv,
    storage: args.storage,
    nodeRed: redJs ? NODE_RED_VERSION : null,
    argon2: { options: { ...ARGON2_OPTIONS, type: 'argon2id' }, floor },
    scenarios: report.scenarios,
    targets: evaluated,
    tables: `${output}${summary}\n`,
  }
  writeFileSync(file, `${JSON.stringify(json, null, 2)}\n`)
  log(`\nfigures written to ${file.pathname} (${((finishedAt - startedAt) / 1000).toFixed(0)} s)`)
  if (args.docs) log(`${writeDocs(file.pathname)} written from this run`)
}

/**
 * One more flowadmin round of `scenario` with the CPU profiler on (not counted in the figures);
 * returns the profile's file and its top frames.
 */
async function profileRound(scenario, target, { credentials, durationMs, warmupMs, cpuProfDir }) {
  const before = new Set(readdirSync(cpuProfDir))
  await measure(scenario, target, { credentials, durationMs, warmupMs, profile: true })
  const written = readdirSync(cpuProfDir).filter((name) => !before.has(name) && name.endsWith('.cpuprofile'))
  if (written.length === 0) {
    log(`${scenario.id}: no CPU profile was written`)
    return null
  }
  // The scenario's server wrote the newest; `start` writes one per start.
  const file = join(cpuProfDir, written.sort().at(-1))
  const { totalMs, byFunction, byPlace } = selfTime(JSON.parse(readFileSync(file, 'utf8')))
  log(`${scenario.id}: CPU profile ${file}`)
  return { file, totalMs, byFunction: byFunction.slice(0, 15), byPlace: byPlace.slice(0, 10) }
}

/** One scenario against one freshly started server: start, log in, settle, warm up, measure, stop. */
async function measure(scenario, target, { credentials, durationMs, warmupMs, profile = false }) {
  if (scenario.startOnly) return measureStarts(scenario, target, { profile })
  const sessions = scenario.seed ? scenario.seed(target.name) : 0
  // The fleet's tokens are its resource server's (a token's audience), the others flowadmin's.
  const seed =
    sessions > 0 ? await target.seed(sessions, scenario.fleet ? RESOURCE_SERVER.id : undefined) : null
  // flowadmin's own loop only: Node-RED does not keep the recorder's signal handler.
  const preload = scenario.loopDelay && target.name === 'flowadmin' ? LOOP_DELAY : null
  const resourceServers =
    scenario.resourceServers && (target.name === 'flowadmin' || target.name === 'flowadmin-sqlite')
      ? [{ id: resourceServer.id, secret: resourceServer.hash }]
      : undefined
  const instance = await target.start({ seed, profile, preload, resourceServers })
  try {
    const rssStartMb = memory(instance.pid).rssMb
    const loginPage = await fetch(`${instance.url}/auth/login`, { signal: AbortSignal.timeout(15_000) })
    await loginPage.arrayBuffer()
    if (loginPage.status !== 200)
      throw new Error(`${target.name}: GET /auth/login answered ${loginPage.status}`)
    // A baseline has no logins: it comes with a live token of its own.
    const token = instance.token ?? (await login({ instance, target, credentials }))
    await sleep(250)
    const rssIdleMb = memory(instance.pid).rssMb
    // The pool is this target's seeded tokens; the fresh copy of the store makes them all live.
    const pool = scenario.pool
      ? { tokens: seed.tokens.slice(0, sessions - (scenario.sessions ?? 0)), next: 0 }
      : null
    const context = {
      instance,
      target,
      token,
      credentials,
      pool,
      seedTokens: seed?.tokens,
      profiling: profile,
    }
    if (preload) context.loopDelay = loopDelayProbe(instance)
    if (!scenario.noWarmup) await scenario.load({ ...context, durationMs: warmupMs, warmup: true })
    // Requests the warm-up left queued must not eat into the measured window.
    const drainMs = await waitForIdle(instance.pid)
    const result = await scenario.load({ ...context, durationMs })
    const { peakMb } = memory(instance.pid)
    // Resident memory once the load is over and the server idle again.
    await waitForIdle(instance.pid)
    await sleep(250)
    const rssEndMb = memory(instance.pid).rssMb
    return {
      ...result,
      rssEndMb,
      drainMs,
      rssStartMb,
      rssIdleMb,
      rssPeakMb: peakMb,
      spawnMs: instance.spawnMs,
      sessionsAtStart: sessions,
    }
  } catch (error) {
    const stderr = instance.output.stderr.trim()
    if (stderr) error.message += `\n${target.name} stderr: ${stderr.slice(-2000)}`
    throw error
  } finally {
    await instance.stop()
  }
}

/** The event loop delay recorder preloaded into a server (see loop-delay.cjs). */
const LOOP_DELAY = new URL('loop-delay.cjs', import.meta.url).pathname

/** Starts the server's loop delay recording over; `read()` ends it and returns its figures. */
function loopDelayProbe(instance) {
  const lines = () => instance.output.stderr.split('\n').filter((l) => l.startsWith('bench-loop-delay '))
  return {
    reset() {
      process.kill(instance.pid, 'SIGUSR2')
    },
    async read() {
      const before = lines().length
      process.kill(instance.pid, 'SIGUSR2')
      for (let waited = 0; lines().length === before && waited < 5000; waited += 10) await sleep(10)
      const line = lines()[before]
      return line ? JSON.parse(line.slice('bench-loop-delay '.length)) : null
    },
  }
}

/** Start to listening, `scenario.starts` times, each server stopped once it listens. */
async function measureStarts(scenario, target, { profile }) {
  const spawns = []
  const rss = []
  for (let i = 0; i < scenario.starts; i++) {
    const instance = await target.start({ profile: profile && i === 0 })
    try {
      spawns.push(instance.spawnMs)
      rss.push(memory(instance.pid).rssMb)
    } finally {
      await instance.stop()
    }
    if (profile) break
  }
  return { starts: spawns, rssAtListen: rss }
}

main()
  // Every PostgreSQL database of the run is dropped, whatever happened.
  .finally(() => postgres?.close())
  .catch((error) => {
    console.error(`bench failed: ${error.stack ?? error}`)
    process.exitCode = 1
  })
