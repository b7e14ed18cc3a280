// `pnpm bench [--peer node-red] [--duration S] [--quick] ...`: loads the built flowadmin server (and
// Node-RED beside it, alternately) scenario by scenario, prints a table per scenario and the
// targets, and writes every figure to bench-results/<timestamp>.json.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { createAccessScenario } from './access.mjs'
import { trackFolder } from './cleanup.mjs'
import { writeDocs } from './docs.mjs'
import { createIdentityScenario } from './fleet-identity.mjs'
import { createFleetScenario } from './fleet-modules.mjs'
import { createRolloutScenario } from './fleet-rollout.mjs'
import { createFleetScaleScenario } from './fleet-scale.mjs'
import { ARGON2_OPTIONS, checkBuilt, measureArgon2Floor, repositoryRoot } from './flowadmin.mjs'
import { createLineUp } from './line-up.mjs'
import { measure, profileRound } from './measure.mjs'
import { NODE_RED_VERSION } from './node-red.mjs'
import { readCommandLine, usage } from './options.mjs'
import { createPostgresStorage, createTwoInstanceScenarios } from './postgres.mjs'
import { machine } from './proc.mjs'
import { combine, combineLocal, evaluateTargets, localTable, scenarioTable } from './report.mjs'
import { createScenarios, fleetLoad, strip } from './scenarios.mjs'
import { growthTable, targetsTable } from './summary-tables.mjs'
import { BENCH_MODULES } from './targets.mjs'
import { versions } from './versions.mjs'

const { args, options, serverRoot, serverEnv, pgUrl } = readCommandLine()
const quick = args.quick

const log = (message) => process.stderr.write(`${message}\n`)

/** The PostgreSQL databases of a `--storage postgres` run. */
let postgres = null

async function main() {
  checkBuilt(serverRoot)
  if (args.server) log(`flowadmin: the build in ${serverRoot.pathname}`)
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
    args.storage === 'postgres' ? await createPostgresStorage({ serverUrl: pgUrl, root: serverRoot }) : null
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
    ...(postgres
      ? []
      : [
          createFleetScenario({ quick, log }),
          createRolloutScenario({ quick, log }),
          createIdentityScenario(),
          createFleetScaleScenario({ quick, log, serverEnv }),
          createAccessScenario(),
        ]),
  ]
  const scenarios = all.filter((s) => !options.only || options.only.has(s.id))
  if (scenarios.length === 0) usage('--only matched no scenario')
  const run = { postgres, work, serverRoot, serverEnv, credentials, cpuProfDir, log }
  const { targets, redJs, resourceServer, targetsOf } = await createLineUp(scenarios, options.peer, run)

  const results = {}
  const report = { scenarios: [] }
  const floors = []
  let output = ''
  const durationMs = options.durationS * 1000
  const warmupMs = options.warmupS * 1000
  /** What every measured round takes (see measure.mjs). */
  const setup = { credentials, durationMs, warmupMs, resourceServer }
  const startedAt = new Date()

  for (const scenario of scenarios) {
    if (scenario.local) {
      const measured = []
      for (let round = 1; round <= options.rounds; round++) {
        const result = await scenario.measure({
          root: serverRoot,
          folder: work,
          durationMs,
          warmupMs,
          quick: Boolean(quick),
          pgUrl,
        })
        measured.push(result)
        log(`${scenario.id} round ${round}: ${scenario.describe(result)}`)
      }
      const profile =
        cpuProfDir && scenario.profile
          ? await scenario.profile({ root: serverRoot, folder: work, cpuProfDir })
          : null
      if (profile) {
        log(
          `${scenario.id}: CPU profile ${profile.file}, ${profile.totalMs.toFixed(0)} ms sampled; top frames:`,
        )
        for (const frame of profile.byFunction.slice(0, 10))
          log(
            `  ${(100 * frame.share).toFixed(1).padStart(5)} %  ${frame.ms.toFixed(1).padStart(8)} ms  ${frame.name}`,
          )
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
      report.scenarios.push({
        id: scenario.id,
        title: scenario.title,
        rounds: { local: measured },
        combined,
        ...(profile ? { profile } : {}),
      })
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
        let result
        try {
          result = await measure(scenario, target, setup)
        } catch (error) {
          // A build measured with --server from before some of these settings refuses them: its
          // column stays empty. This build must take them: here it fails the run.
          if (!args.server || !scenario.mayNotStart?.includes(target.name)) throw error
          const why = error.message.split('\n').filter((line) => line.trim() !== '')
          log(`${scenario.id} round ${round} ${target.name}: not measured: ${why[0]} ${why.at(-1)}`)
          continue
        }
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
      cpuProfDir && profiled ? await profileRound(scenario, profiled, setup, { cpuProfDir, log }) : null
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

main()
  // Every PostgreSQL database of the run is dropped, whatever happened.
  .finally(() => postgres?.close())
  .catch((error) => {
    console.error(`bench failed: ${error.stack ?? error}`)
    process.exitCode = 1
  })
