// The command line of `pnpm bench`: its help, its checks and the options it gives a run.
import { resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { repositoryRoot } from './flowadmin.mjs'
import { NODE_RED_VERSION } from './node-red.mjs'
import { DEFAULT_PG } from './postgres.mjs'

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
                      introspect nr-flows settings-1 toggle-1 toggle-10 login directory logins-100 revoke login-N
                      revoke-N fleet storm fleet-modules fleet-rollout fleet-identity fleet-scale access; with
                      --storage postgres also fleet-2i propagation login-2i toggle-2i)
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

/** Says what is wrong with the command line, and the help; exits 2. */
export function usage(message) {
  console.error(`bench: ${message}\n\n${HELP}`)
  process.exit(2)
}

/**
 * The command line read and checked (the help printed and exit 0 on --help): `args` as given,
 * `options` of the run (as the figures file records them), the root of the build measured, the
 * environment of its processes (--server-env) and the PostgreSQL server (--pg).
 */
export function readCommandLine(argv = process.argv.slice(2)) {
  const { values: args } = parseArgs({
    args: argv,
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
  if (args.peer !== undefined && args.peer !== 'node-red')
    usage(`unknown peer "${args.peer}" (only node-red)`)
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
  const serverRoot = args.server ? pathToFileURL(`${resolve(args.server)}/`) : repositoryRoot
  const serverEnv = Object.fromEntries(
    (args['server-env'] ?? []).map((pair) => {
      const at = pair.indexOf('=')
      if (at <= 0) usage(`--server-env takes NAME=VALUE, not "${pair}"`)
      return [pair.slice(0, at), pair.slice(at + 1)]
    }),
  )
  const pgUrl = args.pg ?? (process.env.FLOWADMIN_TEST_PG || DEFAULT_PG)
  return { args, options, serverRoot, serverEnv, pgUrl }
}
