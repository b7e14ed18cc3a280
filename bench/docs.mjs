// `node bench/docs.mjs [RESULTS.json] [--out FILE]`: writes docs/benchmarks.md (or FILE) from one
// run's figures (the newest file in bench-results/ when none is named): the machine, the versions, every scenario's
// table, the targets, and each scenario's top CPU frames when the run profiled (--cpu-prof); and the
// figures of the newest PostgreSQL run there (`pnpm bench --storage postgres`), if any.
// `pnpm bench:docs` runs the bench beside Node-RED with the profiles, then on PostgreSQL, then this.

import { readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { accessRows } from './access.mjs'
import { directoryRows } from './directory.mjs'
import { identityRows } from './fleet-identity.mjs'
import { fleetRows } from './fleet-modules.mjs'
import { FLEET_ROLLOUT_NOTE, rolloutRows } from './fleet-rollout-report.mjs'
import { FLEET_SCALE_NOTE, fleetScaleRows } from './fleet-scale-report.mjs'
import { trailRows } from './trail.mjs'

const root = new URL('../', import.meta.url)
const COLUMN = {
  flowadmin: 'flowadmin',
  'flowadmin-full': 'flowadmin, every feature',
  'node-red': 'Node-RED',
  hono: 'bare Hono',
  'node-http': 'raw node:http',
  'nr-own': 'Node-RED, own tokens',
  'nr-fa-cache0': 'flowadmin tokens, cacheMs 0',
  'nr-fa-cache1000': 'flowadmin tokens, cacheMs 1000',
}
const column = (name) => COLUMN[name] ?? name
/** Short names for the ratio columns of a scenario with `ratioTo`. */
const SHORT = {
  'flowadmin-full': 'every feature',
  'nr-own': 'own tokens',
  'nr-fa-cache0': 'cacheMs 0',
  'nr-fa-cache1000': 'cacheMs 1000',
}
const short = (name) => SHORT[name] ?? column(name)

const fmt = (value, digits) =>
  value === undefined || value === null || Number.isNaN(value)
    ? '–'
    : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })

/** A Markdown table, its columns padded as the formatter pads them; `align` is 'l' or 'r' per column. */
function table(header, rows, align = header.map((_, i) => (i === 0 ? 'l' : 'r'))) {
  const all = [header, ...rows].map((cells) => cells.map((cell) => String(cell ?? '')))
  const widths = header.map((_, i) => Math.max(3, ...all.map((cells) => cells[i].length)))
  const pad = (cell, i) => (align[i] === 'r' ? cell.padStart(widths[i]) : cell.padEnd(widths[i]))
  const line = (cells) => `| ${cells.map(pad).join(' | ')} |`
  const rule = widths.map((width, i) =>
    align[i] === 'r' ? `${'-'.repeat(width - 1)}:` : `:${'-'.repeat(width - 1)}`,
  )
  return [line(all[0]), `| ${rule.join(' | ')} |`, ...all.slice(1).map(line)].join('\n')
}

/**
 * The rows a scenario shows, as in the printed tables: label, value getter (given the target's
 * figures and the first column's), digits, and whether the row has ratios (req/s only, unless said).
 */
function scenarioRows(scenario) {
  if (scenario.id === 'start') {
    // A run from before the medians has only the largest RSS: its median is shown as none.
    const rss = (r) => r.medianRssStartMb
    return [
      ['start → listening, median ms', (r) => r.medianSpawnMs, 0, true],
      ['start → listening, slowest ms', (r) => r.spawnMs, 0],
      ['RSS at listen, median MB', rss, 1, true],
      ...(scenario.ratioTo
        ? [
            [
              `RSS at listen over ${column(scenario.ratioTo)}, median MB`,
              (r, first) => rss(r) - rss(first),
              1,
            ],
          ]
        : []),
      ['RSS at listen, largest MB', (r) => r.rssStartMb, 1],
    ]
  }
  if (scenario.id === 'storm') {
    return [
      ['GET /settings p50 ms', (r) => r.p50, 2],
      ['GET /settings p99 ms', (r) => r.p99, 2],
      ['GET /settings max ms', (r) => r.max, 2],
      ['event loop delay p99 ms', (r) => r.loopDelay?.p99, 2],
      ['event loop delay max ms', (r) => r.loopDelay?.max, 2],
      ["load generator's event loop delay p99 ms", (r) => r.clientLoopDelay?.p99, 2],
      ['logins/s meanwhile', (r) => r.logins?.rps, 1],
      ['RSS peak MB', (r) => r.rssPeakMb, 1],
    ]
  }
  const p50p99 = (r) => (r?.p50 === undefined ? null : `${fmt(r.p50, 2)} / ${fmt(r.p99, 2)}`)
  if (scenario.paired) {
    const { label, reference } = scenario.paired
    return [
      [`${label}/s`, (r) => r.rps, 0],
      [`${label} p50 / p99 ms`, p50p99],
      [`${label}: server CPU ms/req`, (r) => r.cpuPerRequest, 3],
      [`${reference} req/s, same server and connections`, (r) => r.reference?.rps, 0],
      [`${reference} p50 / p99 ms`, (r) => p50p99(r.reference)],
      [`${reference}: server CPU ms/req`, (r) => r.reference?.cpuPerRequest, 3],
      [`${label} ÷ ${reference}, req/s`, (r) => r.rps / r.reference?.rps, 2],
      [`${label} ÷ ${reference}, CPU per request`, (r) => r.cpuPerRequest / r.reference?.cpuPerRequest, 2],
      ['RSS peak MB', (r) => r.rssPeakMb, 1],
    ]
  }
  return [
    ['req/s', (r) => r.rps, 0],
    ['p50 / p99 ms', p50p99],
    ['server CPU ms/req', (r) => r.cpuPerRequest, 3],
    ...(scenario.peerCpu ? [[`of which ${scenario.peerCpu} CPU ms/req`, (r) => r.peerCpuPerRequest, 3]] : []),
    ['RSS idle after a login MB', (r) => r.rssIdleMb, 1],
    ['RSS peak MB', (r) => r.rssPeakMb, 1],
    ['RSS after the load MB', (r) => r.rssEndMb, 1],
  ]
}

function scenarioSection(scenario) {
  const lines = [`### ${scenario.title}`, '', `\`${scenario.id}\``, '']
  if (scenario.combined.local?.kind === 'access') {
    lines.push(table(['', 'flowadmin'], accessRows(scenario.combined.local)))
    return lines.join('\n')
  }
  if (scenario.combined.local?.kind === 'fleet-identity') {
    lines.push(table(['', 'flowadmin'], identityRows(scenario.combined.local)))
    return lines.join('\n')
  }
  if (scenario.combined.local?.kind === 'fleet-scale') {
    lines.push(
      FLEET_SCALE_NOTE,
      '',
      table(
        ['', 'one instance (SQLite)', 'two instances (PostgreSQL)', 'two ÷ one'],
        fleetScaleRows(scenario.combined.local),
      ),
    )
    if (scenario.profile) {
      lines.push(
        '',
        ...profileLines(
          scenario.profile,
          `Top CPU frames of flowadmin over the idle fleet (self time; one more round with the profiler on, ${fmt(scenario.profile.totalMs, 0)} ms sampled over its idle window):`,
        ),
      )
    }
    return lines.join('\n')
  }
  if (scenario.combined.local?.kind === 'fleet-rollout') {
    lines.push(FLEET_ROLLOUT_NOTE, '', table(['', 'flowadmin'], rolloutRows(scenario.combined.local)))
    return lines.join('\n')
  }
  if (scenario.combined.local?.kind === 'fleet-modules') {
    lines.push(table(['', 'flowadmin'], fleetRows(scenario.combined.local)))
    return lines.join('\n')
  }
  if (scenario.id === 'directory' && Array.isArray(scenario.combined.local)) {
    lines.push(table(['', 'flowadmin'], directoryRows(scenario.combined.local)))
    return lines.join('\n')
  }
  if (scenario.id === 'trail' && Array.isArray(scenario.combined.local)) {
    lines.push(table(['', 'SQLite', 'PostgreSQL'], trailRows(scenario.combined.local)))
    return lines.join('\n')
  }
  if (scenario.combined.local) {
    const local = scenario.combined.local
    lines.push(
      table(
        ['', 'raw better-sqlite3'],
        [
          ['single-change commits/s', fmt(local.singleCommitsPerSecond, 0)],
          ['per round', local.range.map((v) => fmt(v, 0)).join(', ')],
          ['changes/s, 10 a commit', fmt(local.groupedChangesPerSecond, 0)],
        ],
      ),
    )
    return lines.join('\n')
  }
  // flowadmin first, its req/s ÷ each other's; a scenario with `ratioTo` has that target first
  // and each other's req/s ÷ its.
  const firstName = scenario.ratioTo ?? 'flowadmin'
  const present = Object.keys(scenario.combined).filter((name) => scenario.combined[name])
  const names = [
    ...present.filter((name) => name === firstName),
    ...present.filter((name) => name !== firstName),
  ]
  const others = names.slice(1)
  const header = [
    '',
    ...names.map(column),
    ...others.map((n) => (scenario.ratioTo ? `${short(n)} ÷ ${short(firstName)}` : `÷ ${column(n)}`)),
  ]
  const first = scenario.combined[names[0]]
  const rows = scenarioRows(scenario).map(([label, get, digits, withRatio = label === 'req/s']) => {
    const values = names.map((name) => get(scenario.combined[name], first))
    const cells = values.map((v) => (typeof v === 'string' ? v : fmt(v, digits)))
    const base = values[0]
    const ratios = values.slice(1).map((v) => {
      if (typeof base !== 'number' || typeof v !== 'number' || !(v > 0 && base > 0) || !withRatio) return ''
      return `${fmt(scenario.ratioTo ? v / base : base / v, 2)}×`
    })
    return [label, ...cells, ...ratios]
  })
  lines.push(table(header, rows))
  if (scenario.argon2Floor)
    lines.push(
      '',
      `argon2id floor in this run, ${scenario.argon2Floor.concurrency} at once (as many as the server runs): ${fmt(scenario.argon2Floor.perSecond, 1)} verifications/s.`,
    )
  if (scenario.profile) {
    const which = scenario.ratioTo
      ? ' (the one behind the helper, cacheMs 0)'
      : scenario.id === 'start'
        ? ' (demo settings)'
        : ''
    lines.push(
      '',
      ...profileLines(
        scenario.profile,
        `Top CPU frames of flowadmin${which} (self time; a profiled round after the measured ones, ${fmt(scenario.profile.totalMs, 0)} ms sampled from spawn to stop):`,
      ),
    )
  }
  return lines.join('\n')
}

/** A profile's top frames (self time, idle left out) under `heading`. */
function profileLines(profile, heading) {
  const frames = profile.byFunction.filter((f) => !f.name.startsWith('(idle)')).slice(0, 10)
  return [
    heading,
    '',
    table(
      ['share', 'ms', 'function  file:line'],
      frames.map((f) => [`${fmt(100 * f.share, 1)} %`, fmt(f.ms, 1), `\`${f.name.replace(/\|/g, '\\|')}\``]),
      ['r', 'r', 'l'],
    ),
  ]
}

/** How the PostgreSQL store is measured (`--storage postgres`), and the figures of `pgRun` when given. */
function postgresSection(pgRun) {
  const intro = `## PostgreSQL: \`pnpm bench --storage postgres\`

\`\`\`sh
pnpm bench --storage postgres                  # every scenario, flowadmin on PostgreSQL
pnpm bench --storage postgres --pg postgres://postgres@db:5432/postgres --only login-2i,toggle-2i
\`\`\`

The same scenarios as with SQLite, with \`"storage": "postgres"\`: each start of the server gets a
database of its own on the server at \`--pg\` (default \`FLOWADMIN_TEST_PG\`, else
\`postgres://postgres@127.0.0.1:5432/postgres\`), created as a copy of a seeded template when the
scenario needs live tokens, and dropped when the server stops (every database of the run is
dropped at the end, whatever happened). Two scenarios more run two instances on one database,
each request of a worker going to the other instance than its last one:

- **login-2i**: logins, 4 connections, alternating between the instances (the throttle counters
  they share are decided under advisory locks);
- **toggle-2i**: 10 connections, each owning a module that it disables on one instance and enables
  on the other, in turn: every request is a real change, written by one instance and announced to
  the other, which loads the node sets of each enable.

- **fleet-2i**: the fleet of the \`fleet\` scenario (resource servers, each with keep-alive
  connections of its own, introspecting at a fixed rate) split between the two instances;
- **propagation**: a token the second instance has just accepted (and holds in memory) is revoked
  at the first, and the second is asked again and again until it refuses it: the time from the
  revocation's answer to that refusal, one token at a time.

The scenarios \`settings\`, \`introspect\` and \`fleet\` also run flowadmin on SQLite beside it
(\`flowadmin-sqlite\`), so one run gives the PostgreSQL ÷ SQLite ratios.

Server CPU is then both processes' together. The driver measurement behind the choice of \`pg\`
is in [packages/adapter-postgres/README.md](../packages/adapter-postgres/README.md#choosing-the-driver).`
  if (!pgRun) {
    return `${intro}

No PostgreSQL run was in \`bench-results/\` when this file was written: run the command above,
then \`node bench/docs.mjs\`.`
  }
  const m = pgRun.machine
  const rows = pgRun.scenarios
    .filter((scenario) => scenario.combined?.flowadmin?.rps !== undefined)
    .map((scenario) => {
      const r = scenario.combined.flowadmin
      const sqlite = scenario.combined['flowadmin-sqlite']
      return [
        scenario.title,
        fmt(r.rps, 0),
        sqlite ? `${fmt(r.rps / sqlite.rps, 2)}×` : '',
        `${fmt(r.p50, 2)} / ${fmt(r.p99, 2)}`,
        fmt(r.cpuPerRequest, 3),
        fmt(r.rssPeakMb, 1),
        fmt(r.non2xx + r.errors, 0),
      ]
    })
  return `${intro}

### The PostgreSQL run

\`${pgRun.command}\`, started ${pgRun.startedAt}, ${pgRun.options.durationS} s per scenario and round,
${pgRun.options.rounds} round(s); load average ${m.loadavg.join(' ')} at the start; PostgreSQL on the
same machine. Its own ratios and targets are in its results file.

${table(
  ['scenario', 'req/s', '÷ SQLite', 'p50 / p99 ms', 'server CPU ms/req', 'RSS peak MB', 'non-2xx + errors'],
  rows,
  ['l', 'r', 'r', 'r', 'r', 'r', 'r'],
)}`
}

export function renderDocs(run, pgRun = null) {
  const m = run.machine
  const v = run.versions ?? {}
  const versionRows = Object.entries(v)
    .filter(([, value]) => value)
    .map(([name, value]) => [name, String(value)])
  const cautions = []
  if (run.options.durationS < 3 || run.options.rounds < 2)
    cautions.push(`a short run (${run.options.durationS} s × ${run.options.rounds} round(s) a scenario)`)
  if (m.loadavg[0] >= 1) cautions.push(`a busy machine (load average ${m.loadavg[0]} at the start)`)
  const caution = cautions.length
    ? `\n> **Caution:** these figures come from ${cautions.join(' on ')}: they show that every scenario runs and where the time goes, not how fast flowadmin is. Run \`pnpm bench:docs\` on a quiet machine for figures to compare.\n`
    : ''
  return `# Benchmarks
${caution}
This file is written by \`node bench/docs.mjs\` from one run of \`pnpm bench\`, and the PostgreSQL
section from the newest run on PostgreSQL, whose start it names (\`pnpm bench:docs\` runs the
bench beside Node-RED with CPU profiles, then on PostgreSQL, then writes this). Do not edit it by
hand: run it again.

\`\`\`sh
pnpm bench                   # flowadmin and the baselines
pnpm bench --peer node-red   # and Node-RED beside it, scenario by scenario (A B A B ...), with ratios
pnpm bench:docs              # the run this file comes from, then this file
pnpm bench --help            # durations, rounds, session counts, --only, --cpu-prof DIR, --quick
\`\`\`

Every server is started fresh for each scenario and round, from its command line, on 127.0.0.1,
loaded with autocannon after a warm-up. flowadmin runs as \`flowadmin start\` (the bin, through its
first line) with SQLite in a temporary folder (WAL, \`synchronous=FULL\`) and a user whose password
is an argon2id hash at OWASP parameters (m=19456 KiB, t=2, p=1). Node-RED gets the same user
(bcrypt, cost 8, its default), node modules and flows. The baselines answer flowadmin's own
\`GET /auth/login\` and \`GET /settings\` bodies and headers, recorded from it in the same run: a
bare Hono app on @hono/node-server and a raw \`node:http\` server, both checking the bearer token
with a SHA-256 and a lookup in SQLite. The raw SQLite loop commits single-row changes on the
store's own connection settings, in the bench's process: the disk's floor for a durable write.

Two scenarios are about Node-RED instances that take flowadmin's logins and tokens
([@flowadmin/node-red](../packages/node-red/README.md)). **introspect**: flowadmin, with a resource
server in \`adminAuth.resourceServers\`, answering \`POST /auth/introspect\` (HTTP Basic, the
token in a form body) about a live token, and on the same server, with the same connections,
authenticated \`GET /settings\` with that token: the two windows follow each other, in turns
from one round to the next. **nr-flows**: Node-RED's \`GET /flows\` with a token it
issued itself, then with a flowadmin token through the helper (introspection at every request
with \`cacheMs: 0\`, at most one a second with \`cacheMs: 1000\`), each from its own start;
the flowadmin behind the helper is started with Node-RED, and its CPU counts in the server's.

- **req/s**, and **p50 / p99** from the exact time of every response;
- **server CPU ms/req**: user + system time of the server process (\`/proc/<pid>/stat\`) over the
  measured window, per response;
- **RSS** from \`/proc/<pid>/status\`: idle after one login, the peak (VmHWM), and once idle after
  the load;
- **start → listening**: from \`spawn()\` to the line the server prints when it listens, and
  **RSS at listen** then, medians of every start: flowadmin with the bench's demo settings (a
  user, no audit log) and with every optional feature configured (single sign-on, a directory,
  second factors, passkeys, fleet mode with a resource server, an audit log file and the trail's
  bounds, metrics on a listener of their own, CORS, proxies, the palette's policy; the identity
  provider and the directory at an address where nothing answers, as flowadmin asks neither at
  start), each ÷ the bare Hono baseline's.

The load generator shares the machine with the servers: compare ratios within one run, not
absolute figures across runs or machines.

## The run

- Command: \`${run.command}\`, ${run.options.durationS} s per scenario, target and round after a
  ${run.options.warmupS} s warm-up, ${run.options.rounds} round(s); started ${run.startedAt}.
- Machine: ${m.cpus} × ${m.model}, ${m.memGb} GB; load average ${m.loadavg.join(' ')} at the start,
  ${(m.loadavgAtEnd ?? []).join(' ')} at the end.

${table(['component', 'version'], versionRows, ['l', 'l'])}

## Targets

${table(
  ['target', 'value', ''],
  run.targets.map((t) => [
    t.name,
    t.value === null || Number.isNaN(t.value) ? '–' : `${fmt(t.value, 2)}${t.unit}`,
    t.limit === null ? '' : t.status,
  ]),
  ['l', 'r', 'l'],
)}

## Scenarios

${run.scenarios.map(scenarioSection).join('\n\n')}

${postgresSection(pgRun)}

## The full tables, as printed

\`\`\`
${run.tables.trim()}
\`\`\`
`
}

/** The newest run in bench-results/ that `accept` takes, as `{ file, run }`, or null. */
function newestRun(accept) {
  const folder = new URL('bench-results/', root)
  let names = []
  try {
    names = readdirSync(folder).filter((name) => name.endsWith('.json'))
  } catch {
    return null
  }
  for (const name of names.sort().reverse()) {
    const file = new URL(name, folder).pathname
    let run
    try {
      run = JSON.parse(readFileSync(file, 'utf8'))
    } catch {
      continue // a run cut short while it wrote its figures
    }
    if (accept(run)) return { file, run }
  }
  return null
}

const onPostgres = (run) => run.storage === 'postgres'

/**
 * Writes docs/benchmarks.md (or `out`) from the run in `file`, with the newest PostgreSQL run
 * (`pnpm bench --storage postgres`) in bench-results/ for its section; returns the path written.
 */
export function writeDocs(file, out = new URL('docs/benchmarks.md', root).pathname, run = null) {
  const main = run ?? JSON.parse(readFileSync(file, 'utf8'))
  writeFileSync(out, renderDocs(main, newestRun(onPostgres)?.run ?? null))
  return out
}

function main() {
  const { values, positionals } = parseArgs({ options: { out: { type: 'string' } }, allowPositionals: true })
  const newest = positionals[0] === undefined ? newestRun((run) => !onPostgres(run)) : null
  const file = positionals[0] ?? newest?.file
  if (!file) {
    console.error('no run in bench-results/: run `pnpm bench` first, or name a results file')
    process.exit(2)
  }
  console.log(`${writeDocs(file, values.out, newest?.run)} written from ${file}`)
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main()
