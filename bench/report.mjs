// Combining rounds, the tables, and the targets.
import { rolloutTargets } from './fleet-rollout-report.mjs'
import { fleetScaleTargets } from './fleet-scale-report.mjs'
import { summarise } from './load.mjs'

/** One target's rounds of one scenario as one summary: latencies merged, counts and times summed. */
export function combine(rounds) {
  if (rounds.length === 0) return null
  if (rounds[0].starts) {
    const starts = rounds.flatMap((r) => r.starts).sort((a, b) => a - b)
    const rss = rounds.flatMap((r) => r.rssAtListen).sort((a, b) => a - b)
    return {
      rounds: rounds.length,
      starts,
      spawnMs: starts.at(-1),
      medianSpawnMs: median(starts),
      rssAtListen: rss,
      medianRssStartMb: median(rss),
      rssStartMb: rss.at(-1),
    }
  }
  const merged = mergeLoads(rounds)
  const result = {
    ...merged,
    rounds: rounds.length,
    rssStartMb: Math.max(...rounds.map((r) => r.rssStartMb)),
    rssIdleMb: Math.max(...rounds.map((r) => r.rssIdleMb)),
    rssPeakMb: Math.max(...rounds.map((r) => r.rssPeakMb)),
    spawnMs: Math.max(...rounds.map((r) => r.spawnMs)),
    rssEndMb: Math.max(...rounds.map((r) => r.rssEndMb)),
    sessionsAtStart: rounds[0].sessionsAtStart,
    poolExhausted: rounds.some((r) => r.poolExhausted),
  }
  if (rounds[0].fleetRssPeakMb !== undefined) {
    result.fleetRssPeakMb = Math.max(...rounds.map((r) => r.fleetRssPeakMb))
    result.fleetRssMb = Math.max(...rounds.flatMap((r) => r.rssMb))
    result.instances = rounds[0].instances
  }
  if (rounds[0].polls !== undefined) {
    result.polls = rounds.reduce((sum, r) => sum + r.polls, 0)
    result.ask = mergeLoads(rounds.map((r) => r.ask))
  }
  if (rounds[0].logins) result.logins = mergeLoads(rounds.map((r) => r.logins))
  if (rounds[0].reference) result.reference = mergeLoads(rounds.map((r) => r.reference))
  for (const key of ['loopDelay', 'clientLoopDelay']) {
    const delays = rounds.map((r) => r[key]).filter(Boolean)
    if (delays.length) {
      result[key] = {
        p99: Math.max(...delays.map((d) => d.p99)),
        max: Math.max(...delays.map((d) => d.max)),
      }
    }
  }
  return result
}

/** The median of sorted figures (the lower middle one of an even count, as a start that happened). */
const median = (sorted) => sorted[Math.floor((sorted.length - 1) / 2)]

/** Rounds of a measurement made in the bench's own process (the SQLite floor): the means. */
export function combineLocal(rounds) {
  const mean = (get) => rounds.reduce((sum, r) => sum + get(r), 0) / rounds.length
  return {
    rounds: rounds.length,
    singleCommitsPerSecond: mean((r) => r.single.commitsPerSecond),
    groupedCommitsPerSecond: mean((r) => r.grouped.commitsPerSecond),
    groupedChangesPerSecond: mean((r) => r.grouped.changesPerSecond),
    range: rounds.map((r) => r.single.commitsPerSecond),
  }
}

export function localTable(scenario, local, { durationS, rounds }) {
  return [
    `\n## ${scenario.title}  [${scenario.id}; ${durationS} s × ${rounds} round(s)]`,
    `single-change commits/s         ${fmt(local.singleCommitsPerSecond, 0).padStart(10)}`,
    `  (per round)                   ${local.range.map((v) => fmt(v, 0)).join(', ')}`,
    `commits/s, 10 changes each      ${fmt(local.groupedCommitsPerSecond, 0).padStart(10)}`,
    `changes/s, 10 changes a commit  ${fmt(local.groupedChangesPerSecond, 0).padStart(10)}`,
  ].join('\n')
}

function mergeLoads(parts) {
  const latencies = parts.flatMap((part) => Array.from(part.latencies ?? []))
  const statuses = {}
  for (const part of parts) {
    for (const [code, n] of Object.entries(part.statuses)) statuses[code] = (statuses[code] ?? 0) + n
  }
  const sum = (key) => parts.reduce((total, part) => total + part[key], 0)
  const merged = summarise({
    latencies,
    statuses,
    errors: sum('errors'),
    elapsedMs: sum('elapsedMs'),
    cpuMs: sum('cpuMs'),
  })
  if (parts[0].sent !== undefined) merged.sent = sum('sent')
  if (parts[0].peerCpuMs !== undefined) {
    merged.peerCpuMs = sum('peerCpuMs')
    merged.peerCpuPerRequest = merged.count > 0 ? merged.peerCpuMs / merged.count : Number.NaN
  }
  if (parts[0].clientCpuMs !== undefined) {
    merged.clientCpuMs = sum('clientCpuMs')
    merged.clientCpuPerRequest = merged.count > 0 ? merged.clientCpuMs / merged.count : Number.NaN
  }
  return merged
}

/** A figure with `digits` decimals (en-US grouping), or - when there is none. */
export const fmt = (value, digits) =>
  value === undefined || value === null || Number.isNaN(value)
    ? '-'
    : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
const ratio = (a, b) =>
  a > 0 && b > 0 && Number.isFinite(a) && Number.isFinite(b) ? `${fmt(a / b, 2)}×` : ''

/** The rows shown for a scenario: label, value getter, digits, and whether a ratio means anything. */
function rows(scenario) {
  if (scenario.startOnly) {
    return [
      ['spawn→listening median ms', (r) => r.medianSpawnMs, 0],
      ['spawn→listening slowest ms', (r) => r.spawnMs, 0, false],
      ['starts', (r) => r.starts.length, 0, false],
      ['RSS at listen MB (median)', (r) => r.medianRssStartMb, 1],
      ['RSS at listen MB (largest)', (r) => r.rssStartMb, 1, false],
      // `first`: the target the others are compared with (bare Hono), when the scenario has one.
      ...(scenario.ratioTo
        ? [
            [
              `RSS at listen over ${scenario.ratioTo} MB (medians)`,
              (r, first) => r.medianRssStartMb - first.medianRssStartMb,
              1,
              false,
            ],
          ]
        : []),
    ]
  }
  if (scenario.storm) {
    return [
      ['GET /settings sent', (r) => r.sent, 0, false],
      ['GET /settings answered', (r) => r.count, 0, false],
      ['GET p50 ms', (r) => r.p50, 2],
      ['GET p99 ms', (r) => r.p99, 2],
      ['GET max ms', (r) => r.max, 2],
      ['event loop delay p99 ms', (r) => r.loopDelay?.p99, 2],
      ['event loop delay max ms', (r) => r.loopDelay?.max, 2],
      ["load generator's event loop delay p99 ms", (r) => r.clientLoopDelay?.p99, 2],
      ["load generator's event loop delay max ms", (r) => r.clientLoopDelay?.max, 2],
      ['logins/s meanwhile', (r) => r.logins.rps, 1],
      ['login p99 ms', (r) => r.logins.p99, 1],
      ['server CPU ms/s', (r) => r.cpuMs / (r.elapsedMs / 1000), 0],
      ['RSS at listen MB', (r) => r.rssStartMb, 1],
      ['RSS idle (after a login) MB', (r) => r.rssIdleMb, 1],
      ['RSS peak MB', (r) => r.rssPeakMb, 1],
      ['spawn→listening ms', (r) => r.spawnMs, 0],
      ['non-2xx + errors', (r) => r.non2xx + r.errors + r.logins.non2xx + r.logins.errors, 0, false],
    ]
  }
  if (scenario.fleet) {
    return [
      ['introspections sent', (r) => r.sent, 0, false],
      ['introspections answered/s', (r) => r.rps, 0],
      ['p50 ms', (r) => r.p50, 3],
      ['p99 ms', (r) => r.p99, 3],
      ['max ms', (r) => r.max, 2],
      ['server CPU ms/introspection (every instance)', (r) => r.cpuPerRequest, 3],
      ['RSS MB (largest instance, end of load)', (r) => r.fleetRssMb, 1],
      ['RSS peak MB (largest instance)', (r) => r.fleetRssPeakMb, 1],
      ["load generator's event loop delay p99 ms", (r) => r.clientLoopDelay?.p99, 2],
      ['non-2xx + errors', (r) => r.non2xx + r.errors, 0, false],
    ]
  }
  if (scenario.propagation) {
    return [
      ['revocations measured', (r) => r.count, 0, false],
      ['refused at the other, p50 ms', (r) => r.p50, 3],
      ['refused at the other, p99 ms', (r) => r.p99, 3],
      ['refused at the other, max ms', (r) => r.max, 3],
      ['one GET /settings there (the floor), p50 ms', (r) => r.ask?.p50, 3],
      ['one GET /settings there (the floor), p99 ms', (r) => r.ask?.p99, 3],
      ['asks at the other instance after the revocations', (r) => r.polls, 0, false],
      ['non-200 revokes + errors', (r) => r.non2xx + r.errors, 0, false],
    ]
  }
  if (scenario.paired) {
    // One server measured twice: `reference` is the request the scenario's own is compared with.
    const { label, reference } = scenario.paired
    const ref = (get) => (r) => (r.reference ? get(r.reference) : undefined)
    return [
      [`${label}/s`, (r) => r.rps, 0],
      [`${label} p50 ms`, (r) => r.p50, 3],
      [`${label} p99 ms`, (r) => r.p99, 3],
      [`${label}: server CPU ms/req`, (r) => r.cpuPerRequest, 3],
      [`${reference} req/s (same server, same connections)`, ref((r) => r.rps), 0],
      [`${reference} p50 ms`, ref((r) => r.p50), 3],
      [`${reference} p99 ms`, ref((r) => r.p99), 3],
      [`${reference}: server CPU ms/req`, ref((r) => r.cpuPerRequest), 3],
      [`${label} ÷ ${reference}, req/s`, (r) => r.rps / r.reference?.rps, 2, false],
      [
        `${label} ÷ ${reference}, server CPU per request`,
        (r) => r.cpuPerRequest / r.reference?.cpuPerRequest,
        2,
        false,
      ],
      ['RSS at listen MB', (r) => r.rssStartMb, 1],
      ['RSS peak MB', (r) => r.rssPeakMb, 1],
      ['requests measured', (r) => r.count + (r.reference?.count ?? 0), 0, false],
      [
        'non-2xx + errors',
        (r) => r.non2xx + r.errors + (r.reference ? r.reference.non2xx + r.reference.errors : 0),
        0,
        false,
      ],
    ]
  }
  return [
    ['req/s', (r) => r.rps, 0],
    ['p50 ms', (r) => r.p50, 3],
    ['p99 ms', (r) => r.p99, 3],
    ['server CPU ms/req', (r) => r.cpuPerRequest, 3],
    ...(scenario.peerCpu
      ? [[`  of which ${scenario.peerCpu} CPU ms/req`, (r) => r.peerCpuPerRequest, 3]]
      : []),
    ['load generator CPU ms/req', (r) => r.clientCpuPerRequest, 3],
    ['RSS at listen MB', (r) => r.rssStartMb, 1],
    ['RSS idle (after a login) MB', (r) => r.rssIdleMb, 1],
    ['RSS peak MB', (r) => r.rssPeakMb, 1],
    ['RSS after the load, idle MB', (r) => r.rssEndMb, 1],
    ['spawn→listening ms', (r) => r.spawnMs, 0],
    ['live sessions at start', (r) => r.sessionsAtStart, 0, false],
    ['requests measured', (r) => r.count, 0, false],
    ['non-2xx + errors', (r) => r.non2xx + r.errors, 0, false],
  ]
}

/** Short names of the other targets, for the ratio columns. */
const SHORT = {
  flowadmin: 'fa',
  'flowadmin-sqlite': 'sqlite',
  'node-red': 'nr',
  hono: 'hono',
  'node-http': 'node:http',
  'nr-own': 'own',
  'nr-fa-cache0': 'fa 0',
  'nr-fa-cache1000': 'fa 1000',
}
const short = (name) => SHORT[name] ?? name

/**
 * The table of one scenario: one column per target measured (flowadmin first), then flowadmin's
 * ratio to each other one (flowadmin ÷ node-red, ÷ bare Hono, ÷ raw node:http). A scenario with
 * `ratioTo` has that target first instead, and each other one's ratio to it (other ÷ it).
 */
export function scenarioTable(scenario, combined, { floor, durationS, rounds }) {
  const first = scenario.ratioTo ?? 'flowadmin'
  const fa = combined[first]
  const others = Object.keys(combined).filter((name) => name !== first && combined[name])
  const lines = [`\n## ${scenario.title}  [${scenario.id}; ${durationS} s × ${rounds} round(s) each]`]
  const header = [
    '',
    first,
    ...others,
    ...others.map((name) => (scenario.ratioTo ? `${short(name)} ÷ ${short(first)}` : `fa ÷ ${short(name)}`)),
  ]
  const body = rows(scenario).map(([label, get, digits, withRatio = true]) => {
    const a = get(fa, fa)
    const values = others.map((name) => get(combined[name], fa))
    return [
      label,
      fmt(a, digits),
      ...values.map((v) => fmt(v, digits)),
      ...values.map((v) => (withRatio ? (scenario.ratioTo ? ratio(v, a) : ratio(a, v)) : '')),
    ]
  })
  const blank = header.slice(2).map(() => '')
  if (scenario.floor && floor) {
    body.push([`argon2id floor /s (${floor.concurrency} at once)`, fmt(floor.perSecond, 1), ...blank])
    body.push(['logins ÷ floor', fmt(fa.rps / floor.perSecond, 2), ...blank])
  }
  if (fa?.poolExhausted || others.some((name) => combined[name].poolExhausted))
    body.push(['(token pool used up: window ended early)', '', ...blank])
  const widths = header.map((_, i) => Math.max(...[header, ...body].map((row) => (row[i] ?? '').length)))
  const line = (cells) =>
    cells
      .map((cell, i) => (i === 0 ? (cell ?? '').padEnd(widths[i]) : (cell ?? '').padStart(widths[i])))
      .join('  ')
  lines.push(line(header), ...body.map(line))
  return lines.join('\n')
}

/** The targets, each held, missed, or not measured in this run. */
export function evaluateTargets(results, { floor, sessionSizes }) {
  const fa = (id) => results[id]?.flowadmin
  const nr = (id) => results[id]?.['node-red']
  const targets = []
  const add = (name, value, limit, held, unit = '') =>
    targets.push({
      name,
      value,
      limit,
      unit,
      status: value === null || Number.isNaN(value) ? 'not measured' : held(value) ? 'held' : 'missed',
    })
  /** A figure reported beside the targets, with none of its own. */
  const figure = (name, value, unit) => add(`${name} (no target)`, value, null, () => true, unit)
  const rpsRatio = (id) => (fa(id) && nr(id) ? fa(id).rps / nr(id).rps : null)
  add('GET /auth/login ≥ 3× Node-RED', rpsRatio('login-page'), 3, (v) => v >= 3, '×')
  add(
    'GET /healthz server CPU per request ≤ 1.2× GET /auth/login',
    fa('healthz') && fa('login-page') ? fa('healthz').cpuPerRequest / fa('login-page').cpuPerRequest : null,
    1.2,
    (v) => v <= 1.2,
    '×',
  )
  add('authenticated GET /settings ≥ 4× Node-RED', rpsRatio('settings'), 4, (v) => v >= 4, '×')
  const baseline = (id, name) => results[id]?.[name]
  const toBaseline = (id, name) => (fa(id) && baseline(id, name) ? fa(id).rps / baseline(id, name).rps : null)
  add('GET /auth/login ≥ 0.8× bare Hono', toBaseline('login-page', 'hono'), 0.8, (v) => v >= 0.8, '×')
  add(
    'authenticated GET /settings ≥ 0.75× bare Hono',
    toBaseline('settings', 'hono'),
    0.75,
    (v) => v >= 0.75,
    '×',
  )
  const introspect = fa('introspect')
  add(
    'introspection ÷ authenticated GET /settings ≥ 0.8× (same server, same connections)',
    introspect?.reference ? introspect.rps / introspect.reference.rps : null,
    0.8,
    (v) => v >= 0.8,
    '×',
  )
  // --storage postgres: flowadmin on PostgreSQL ÷ flowadmin on SQLite, in one run.
  const sq = (id) => results[id]?.['flowadmin-sqlite']
  const toSqlite = (id) => (fa(id) && sq(id) ? fa(id).rps / sq(id).rps : null)
  if (sq('settings') || sq('introspect')) {
    add(
      'PostgreSQL: authenticated GET /settings ≥ 0.8× SQLite',
      toSqlite('settings'),
      0.8,
      (v) => v >= 0.8,
      '×',
    )
    add('PostgreSQL: introspection ≥ 0.8× SQLite', toSqlite('introspect'), 0.8, (v) => v >= 0.8, '×')
    figure(
      'PostgreSQL: fleet introspection p99 ÷ SQLite',
      fa('fleet') && sq('fleet') ? fa('fleet').p99 / sq('fleet').p99 : null,
      '×',
    )
  }
  figure('a revocation refused at the other instance, p99', fa('propagation')?.p99 ?? null, ' ms')
  figure('fleet: introspections answered/s, one instance', fa('fleet')?.rps ?? null, '')
  figure('fleet: p99, one instance', fa('fleet')?.p99 ?? null, ' ms')
  figure('fleet: server CPU per introspection, one instance', fa('fleet')?.cpuPerRequest ?? null, ' ms')
  figure(
    'fleet: two instances ÷ one, server CPU per introspection',
    fa('fleet-2i') && fa('fleet') ? fa('fleet-2i').cpuPerRequest / fa('fleet').cpuPerRequest : null,
    '×',
  )
  figure('fleet: p99, two instances', fa('fleet-2i')?.p99 ?? null, ' ms')
  for (const goal of fleetScaleTargets(results['fleet-scale']?.local))
    add(goal.name, goal.value, goal.limit, goal.held, goal.unit)
  for (const goal of rolloutTargets(results['fleet-rollout']?.local))
    add(goal.name, goal.value, goal.limit, goal.held, goal.unit)
  const flows = (name) => results['nr-flows']?.[name]
  for (const cacheMs of [0, 1000]) {
    const helper = flows(`nr-fa-cache${cacheMs}`)
    const own = flows('nr-own')
    figure(
      `Node-RED GET /flows, flowadmin tokens through @flowadmin/node-red (cacheMs ${cacheMs}) ÷ its own tokens`,
      helper && own ? helper.rps / own.rps : null,
      '×',
    )
  }
  figure('GET /auth/login ÷ raw node:http', toBaseline('login-page', 'node-http'), '×')
  figure('authenticated GET ÷ raw node:http', toBaseline('settings', 'node-http'), '×')
  add('durable toggle, 1 connection ≥ 15× Node-RED', rpsRatio('toggle-1'), 15, (v) => v >= 15, '×')
  add('durable toggle, 10 connections ≥ 15× Node-RED', rpsRatio('toggle-10'), 15, (v) => v >= 15, '×')
  add(
    'toggles, 10 connections ≥ 5× 1 connection',
    fa('toggle-10') && fa('toggle-1') ? fa('toggle-10').rps / fa('toggle-1').rps : null,
    5,
    (v) => v >= 5,
    '×',
  )
  const commits = results['sqlite-commits']?.local
  add(
    'toggles, 1 connection ≥ 0.6× raw SQLite single commits',
    fa('toggle-1') && commits ? fa('toggle-1').rps / commits.singleCommitsPerSecond : null,
    0.6,
    (v) => v >= 0.6,
    '×',
  )
  // One connection does one thing at a time: a toggle takes at least an authenticated request's
  // round trip plus a durable commit, so its rate is at most 1 / (1/GET rate + 1/commit rate).
  const ceiling =
    fa('settings-1') && commits ? 1 / (1 / fa('settings-1').rps + 1 / commits.singleCommitsPerSecond) : null
  figure(
    'toggles, 1 connection ÷ (1-connection GET /settings + a raw commit)',
    fa('toggle-1') && ceiling ? fa('toggle-1').rps / ceiling : null,
    '×',
  )
  figure(
    'that ceiling ÷ raw SQLite single commits',
    ceiling ? ceiling / commits.singleCommitsPerSecond : null,
    '×',
  )
  const largest = Math.max(...sessionSizes)
  const grown = fa(`login-${largest}`)
  const base = fa('login')
  add(
    `login CPU cost with ${largest} sessions ≤ 1.1× with 0`,
    grown && base ? grown.cpuPerRequest / base.cpuPerRequest : null,
    1.1,
    (v) => v <= 1.1,
    '×',
  )
  add(
    'logins/s ≥ 0.9× argon2id floor',
    base && floor ? base.rps / floor.perSecond : null,
    0.9,
    (v) => v >= 0.9,
    '×',
  )
  add('login storm: GET p99 ≤ 5 ms', fa('storm')?.p99 ?? null, 5, (v) => v <= 5, ' ms')
  figure('login storm: event loop delay p99', fa('storm')?.loopDelay?.p99 ?? null, ' ms')
  figure(
    "login storm: the load generator's own event loop delay p99",
    fa('storm')?.clientLoopDelay?.p99 ?? null,
    ' ms',
  )
  const all = Object.values(results)
    .map((r) => r.flowadmin)
    .filter(Boolean)
  const max = (key) => {
    const values = all.map((r) => r[key]).filter((v) => typeof v === 'number' && !Number.isNaN(v))
    return values.length ? Math.max(...values) : null
  }
  add('RSS idle at listen ≤ 60 MB (largest of every start)', max('rssStartMb'), 60, (v) => v <= 60, ' MB')
  add('RSS idle after a login ≤ 60 MB (largest)', max('rssIdleMb'), 60, (v) => v <= 60, ' MB')
  add('RSS after 100 logins, idle ≤ 80 MB', fa('logins-100')?.rssEndMb ?? null, 80, (v) => v <= 80, ' MB')
  add('RSS under load ≤ 120 MB (largest peak)', max('rssPeakMb'), 120, (v) => v <= 120, ' MB')
  // The start scenario: flowadmin with the demo settings and with every feature, beside bare Hono.
  const hono = results.start?.hono
  for (const [name, settings] of [
    ['flowadmin', 'demo settings'],
    ['flowadmin-full', 'every feature configured'],
  ]) {
    const started = results.start?.[name]
    add(
      `start→listening ≤ 300 ms, ${settings} (median of the start scenario)`,
      started?.medianSpawnMs ?? null,
      300,
      (v) => v <= 300,
      ' ms',
    )
    add(
      `RSS at listen ≤ bare Hono + 5 MB, ${settings} (medians of the start scenario; the excess)`,
      started && hono ? started.medianRssStartMb - hono.medianRssStartMb : null,
      5,
      (v) => v <= 5,
      ' MB',
    )
  }
  add('spawn→listening ≤ 300 ms (slowest start of the run)', max('spawnMs'), 300, (v) => v <= 300, ' ms')
  return targets
}
