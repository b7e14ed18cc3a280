// The fleet-scale scenario's figures: its rows (the run's table and docs/benchmarks.md), its
// printed table, and the targets it is judged by.

const fmt = (value, digits) =>
  typeof value !== 'number' || Number.isNaN(value)
    ? '-'
    : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
const largest = (values) => Math.max(...values)
/** Milliseconds of CPU per poll, from % of one core and polls per second. */
const perPoll = (pct, pollsPerSecond) => (pollsPerSecond > 0 ? (10 * pct) / pollsPerSecond : Number.NaN)

/** What the scenario does, for docs/benchmarks.md. */
export const FLEET_SCALE_NOTE = `Lean agents in a few child processes of the bench speak the protocol of the helper's poll loop
([fleet-poll.js](../packages/node-red/lib/fleet-poll.js)), each on a keep-alive connection of its
own: one report when it joins (Node-RED 4.1 with one module), then \`GET /fleet/instances/{id}/desired\`
held with \`If-None-Match\` and \`Prefer: wait=N\` (the default \`fleet.hold\`, 15 s), authenticated
as the fleet's resource server (its secret a \`sha256:\` digest, as \`flowadmin secret\` gives it), a
pause of 250–750 ms between polls. They apply nothing; flowadmin runs with \`fleet.wait: 0\`, so a
change's answer does not wait for outcomes they never report. First on one flowadmin (SQLite),
then split between two flowadmin instances on one throw-away PostgreSQL database, every change
made at the first. A **change** is \`PUT /nodes/:module\` as the admin; its time runs from the PUT's
answer (or its sending) to each agent's receipt of the new version (the machine's monotonic clock,
shared by the processes; an agent woken before the answer is read counts below zero). The first
change decides the module (it was only reported) while the agents poll out of step; the others
follow a second after every agent received the last, each agent then holding a poll. **RSS**:
flowadmin's resident memory idle (after the first introspection windows) and with every poll held.
**CPU over the idle fleet**: \`/proc/<pid>/stat\` over two of the agents' rounds (every agent polls
twice), as % of one core, beside the same agents on a bare \`node:http\` server that holds their polls
with nothing behind (the floor). **Introspection**: the \`introspect\` load (10 connections, closed
loop, split between the instances) before the agents join, while they hold polls, and after they
left; its rate with them ÷ the mean of the two without.`

/** The targets, each with the figure it judges (of one fleet, one or two instances). */
const GOALS = [
  {
    name: 'a module change reaches every agent, p99 ≤ 2 s',
    value: (fleet) => (fleet.delivery.missing > 0 ? Number.POSITIVE_INFINITY : fleet.delivery.p99),
    limit: 2000,
    unit: ' ms',
    held: (v) => v <= 2000,
  },
  {
    name: 'RSS with the polls held ≤ idle + 100 MB',
    value: (fleet) => fleet.growthMb,
    limit: 100,
    unit: ' MB',
    held: (v) => v <= 100,
  },
  {
    name: 'an idle fleet costs ≤ 2 % of one core',
    value: (fleet) => largest(fleet.idleCpuPct),
    limit: 2,
    unit: ' %',
    held: (v) => v <= 2,
  },
  {
    name: 'introspection with the agents ≥ 0.8× without',
    value: (fleet) => fleet.introspect.ratio,
    limit: 0.8,
    unit: '×',
    held: (v) => v >= 0.8,
  },
]

const usable = (fleet) => fleet !== null && fleet !== undefined && !fleet.error

/**
 * The targets for targets.mjs's table (`{name, value, limit, unit, held}`), for one instance and
 * for two; none when the scenario did not run.
 */
export function fleetScaleTargets(local) {
  if (!local) return []
  return [
    ['one instance', local.one],
    ['two instances on PostgreSQL', local.two],
  ].flatMap(([where, fleet]) =>
    GOALS.map((goal) => ({
      name: `fleet of ${local.one?.agents ?? local.two?.agents ?? '?'}, ${where}: ${goal.name}`,
      value: usable(fleet) ? goal.value(fleet) : null,
      limit: goal.limit,
      unit: goal.unit,
      held: goal.held,
    })),
  )
}

/**
 * The rows: a label, the figure of one instance, of two, and two ÷ one where a ratio means
 * something.
 */
export function fleetScaleRows(local) {
  const { one, two } = local
  const cell = (fleet, get, digits) => (usable(fleet) ? fmt(get(fleet), digits) : '-')
  const row = (label, get, digits, ratio = false) => {
    const a = usable(one) ? get(one) : Number.NaN
    const b = usable(two) ? get(two) : Number.NaN
    return [
      label,
      cell(one, get, digits),
      cell(two, get, digits),
      ratio && a > 0 && b > 0 ? `${fmt(b / a, 2)}×` : '',
    ]
  }
  const p = (get) => (fleet) =>
    `${fmt(get(fleet).p50, 0)} / ${fmt(get(fleet).p99, 0)} / ${fmt(get(fleet).max, 0)}`
  const text = (label, get) => [label, usable(one) ? get(one) : '-', usable(two) ? get(two) : '-', '']
  /** A row of the floor, measured beside one instance only. */
  const floorRow = (label, get) => [label, local.floor ? get(local.floor) : '-', '', '']
  const verdict = (goal) =>
    text(`goal: ${goal.name}`, (fleet) => (goal.held(goal.value(fleet)) ? 'met' : 'missed'))
  return [
    row('agents (each instance holds its share)', (f) => f.agents, 0),
    row('changes measured', (f) => f.changes, 0),
    text(
      'change → every agent, from the PUT answered: p50 / p99 / max ms',
      p((f) => f.delivery),
    ),
    row('↳ p99 ms', (f) => f.delivery.p99, 0, true),
    text(
      'change → every agent, from the PUT sent: p50 / p99 / max ms',
      p((f) => f.fromSend),
    ),
    row('PUT /nodes/:module answered, median ms', (f) => f.putMs.p50, 1, true),
    row('agents that did not receive a change', (f) => f.delivery.missing, 0),
    row('RSS idle MB (largest instance)', (f) => largest(f.rssIdleMb), 1),
    row('RSS with the polls held MB (largest instance)', (f) => largest(f.rssHeldMb), 1),
    row('RSS growth MB (largest of the instances)', (f) => f.growthMb, 1, true),
    row('CPU over the idle fleet, % of one core (largest instance)', (f) => largest(f.idleCpuPct), 2, true),
    row('↳ all instances together, % of one core', (f) => f.idleCpuPct.reduce((a, b) => a + b, 0), 2),
    row('↳ polls answered per second meanwhile (all instances)', (f) => f.idlePollsPerSecond, 1),
    row(
      '↳ CPU per poll (all instances), ms',
      (f) =>
        perPoll(
          f.idleCpuPct.reduce((a, b) => a + b, 0),
          f.idlePollsPerSecond,
        ),
      3,
      true,
    ),
    floorRow('↳ the floor: a bare node:http server holding the same polls, % of one core', (floor) =>
      fmt(floor.idleCpuPct, 2),
    ),
    floorRow('↳ the floor: CPU per poll, ms', (floor) =>
      fmt(perPoll(floor.idleCpuPct, floor.idlePollsPerSecond), 3),
    ),
    floorRow('↳ flowadmin ÷ the floor', (floor) =>
      usable(one) && floor.idleCpuPct > 0 ? `${fmt(largest(one.idleCpuPct) / floor.idleCpuPct, 2)}×` : '-',
    ),
    row("↳ the agents' own CPU, % of one core", (f) => f.agentsCpuPct, 2),
    row(
      'introspections/s without the agents (mean of before and after)',
      (f) => f.introspect.without,
      0,
      true,
    ),
    row('introspections/s with the agents holding polls', (f) => f.introspect.with, 0, true),
    row('↳ with ÷ without', (f) => f.introspect.ratio, 2),
    row('poll requests that got no answer', (f) => f.pollErrors, 0),
    ...GOALS.map(verdict),
  ]
}

/** The printed table of the run. */
export function fleetScaleTable(scenario, local, { rounds }) {
  const rows = [['', 'one instance', 'two instances', 'two ÷ one'], ...fleetScaleRows(local)]
  const widths = rows[0].map((_, i) => Math.max(...rows.map((cells) => cells[i].length)))
  const lines = [`\n## ${scenario.title}  [${scenario.id}; ${rounds} round(s)]`]
  for (const cells of rows) {
    lines.push(
      cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  '),
    )
  }
  for (const [where, fleet] of [
    ['two instances', local.two],
    ['one instance', local.one],
  ]) {
    if (fleet?.error) lines.push(`${where}: not measured (${fleet.error})`)
    const failures = Object.entries(fleet?.pollFailures ?? {}).map(([why, n]) => `${n} × ${why}`)
    if (failures.length > 0) lines.push(`${where}: polls without an answer: ${failures.join('; ')}`)
  }
  return lines.join('\n')
}
