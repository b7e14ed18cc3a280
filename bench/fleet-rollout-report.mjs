// The fleet-rollout scenario's figures: its rounds combined, its rows (the run's table and
// docs/benchmarks.md), and the bound it is judged by.

const fmt = (value, digits) =>
  typeof value !== 'number' || Number.isNaN(value)
    ? '-'
    : value.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits })
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]
const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length

/** What the scenario does, for docs/benchmarks.md. */
export const FLEET_ROLLOUT_NOTE = `flowadmin (fleet mode, memory store, \`fleet.groups: {"bench": ["bench-*"]}\`) and N
Node-RED instances \`bench-1\` … \`bench-N\` whose helper has \`fleet: true\`. The flows: 8 tabs
and 248 chains of an inject, a function, a change and a debug node (Node-RED's core types,
nothing to install), 1,000 entries. **Own POST /flows**: one instance's own admin API
(\`Node-RED-API-Version: v2\`, a \`full\` deployment) replacing the flows it runs, from the
request to its answer; one node's name differs at each. **Rollout**: after a first rollout brought
every instance to the flows, each round uploads a new version (one node's name changed) and times
\`POST /fleet/groups/bench/rollouts\` until \`GET /fleet/rollouts/{id}\`, asked every 50 ms, says
\`succeeded\`: flowadmin wakes the held polls, every helper fetches the target, deploys it
(\`full\`) and reports. The bound: 2 × the median own POST /flows + 1 s. **CPU ms** (medians,
\`/proc/<pid>/stat\`): of the instance over its own POST /flows, and of every instance together and
of flowadmin over a rollout; with more instances than cores they share the cores, and a rollout's
time is at least its instances' CPU ÷ the cores. **RSS per snapshot**:
flowadmin's resident memory 3 s after its last request, before and after K more uploads of the
flows, the growth ÷ K; on that flowadmin (memory store), then on one with SQLite and no instance.
The server's garbage cannot be collected on demand: this is RSS growth, not what a snapshot keeps.`

/** The rounds of run.mjs as one result: every timed deploy and rollout together, memory averaged. */
export function combineRollouts(rounds) {
  const all = (key) => rounds.flatMap((round) => round[key])
  return {
    kind: 'fleet-rollout',
    rounds: rounds.length,
    instances: rounds[0].instances,
    nodes: rounds[0].nodes,
    bytes: rounds[0].bytes,
    stored: rounds[0].stored,
    directMs: all('directMs'),
    directCpuMs: all('directCpuMs'),
    rolloutMs: all('rolloutMs'),
    rolloutCpuMs: {
      flowadmin: rounds.flatMap((round) => round.rolloutCpuMs.flowadmin),
      nodeRed: rounds.flatMap((round) => round.rolloutCpuMs.nodeRed),
    },
    uploadMs: all('uploadMs'),
    rssPerSnapshotKb: {
      memory: mean(rounds.map((round) => round.rssPerSnapshotKb.memory)),
      sqlite: mean(rounds.map((round) => round.rssPerSnapshotKb.sqlite)),
    },
  }
}

/** The bound of the issue, ms: twice one instance's own POST /flows (median) plus one second. */
const boundMs = (local) => 2 * median(local.directMs) + 1000

/** The targets for the run's table (`{name, value, limit, unit, held}`); none when the scenario did not run. */
export function rolloutTargets(local) {
  if (!local) return []
  const bound = boundMs(local)
  const name = (which) =>
    `fleet rollout of ${fmt(local.nodes, 0)} nodes to ${local.instances} instances, ${which} ≤ 2× own POST /flows + 1 s (÷ that bound)`
  const memory = (store) => ({
    name: `fleet rollout: flowadmin RSS growth per stored ${fmt(local.nodes, 0)}-node snapshot, ${store} store (no target)`,
    value: local.rssPerSnapshotKb[store === 'SQLite' ? 'sqlite' : 'memory'],
    limit: null,
    unit: ' KB',
    held: () => true,
  })
  return [
    ...[
      { name: name('median'), value: median(local.rolloutMs) / bound },
      { name: name('slowest'), value: Math.max(...local.rolloutMs) / bound },
    ].map((goal) => ({ ...goal, limit: 1, unit: '×', held: (v) => v <= 1 })),
    memory('memory'),
    memory('SQLite'),
  ]
}

/** The scenario's figures as table rows (the run's table and the docs). */
export function rolloutRows(local) {
  const bound = boundMs(local)
  const rolloutMedian = median(local.rolloutMs)
  const rolloutMax = Math.max(...local.rolloutMs)
  return [
    [
      'snapshot: entries (tabs and nodes) / bytes of its file',
      `${fmt(local.nodes, 0)} / ${fmt(local.bytes, 0)}`,
    ],
    [
      `own POST /flows at one instance, median / max ms (${local.directMs.length})`,
      `${fmt(median(local.directMs), 0)} / ${fmt(Math.max(...local.directMs), 0)}`,
    ],
    [
      `rollout to ${local.instances} until succeeded, median / max ms (${local.rolloutMs.length})`,
      `${fmt(rolloutMedian, 0)} / ${fmt(rolloutMax, 0)}`,
    ],
    [
      'CPU ms: own POST /flows / rollout: Node-REDs, flowadmin',
      `${fmt(median(local.directCpuMs), 0)} / ${fmt(median(local.rolloutCpuMs.nodeRed), 0)}, ${fmt(median(local.rolloutCpuMs.flowadmin), 0)}`,
    ],
    ['bound: 2 × own POST /flows median + 1000 ms', fmt(bound, 0)],
    ['rollout median ÷ the bound', `${fmt(rolloutMedian / bound, 2)}×`],
    ['rollout max ÷ the bound', `${fmt(rolloutMax / bound, 2)}×`],
    [`goal: every rollout ≤ 2 × own POST /flows + 1 s`, rolloutMax <= bound ? 'met' : 'missed'],
    ['POST /fleet/snapshots of the flows, median ms', fmt(median(local.uploadMs), 0)],
    [
      `RSS growth per stored snapshot, memory store KB (${local.stored})`,
      fmt(local.rssPerSnapshotKb.memory, 1),
    ],
    [`RSS growth per stored snapshot, SQLite KB (${local.stored})`, fmt(local.rssPerSnapshotKb.sqlite, 1)],
  ]
}
