// The fleet-rollout scenario: the built flowadmin in fleet mode with a group `bench` of N real
// Node-RED instances (bench-1 … bench-N) whose @flowadmin/node-red helper has `fleet: true`. It
// times a rollout of a 1,000-node snapshot to the group, from `POST /fleet/groups/bench/rollouts`
// to `GET /fleet/rollouts/{id}` saying `succeeded`, beside one instance's own `POST /flows` of the
// same flows, and measures flowadmin's RSS growth per stored snapshot of them (memory store and
// SQLite). The figures are judged in fleet-rollout-report.mjs.
import { createHash } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { startBuiltServer } from './built-server.mjs'
import { startInstance, tokenAt } from './fleet-modules.mjs'
import { combineRollouts, rolloutRows } from './fleet-rollout-report.mjs'
import { ARGON2_OPTIONS, argon2, RESOURCE_SERVER } from './flowadmin.mjs'
import { installNodeRed } from './node-red.mjs'
import { cpuMs, memory } from './proc.mjs'

const USER = { username: 'admin', password: 'bench-password-0123' }
const GROUP = 'bench'
/** Entries of the flows: tabs and nodes together, as a snapshot counts them. */
export const NODES = 1000
const TABS = 8
const CHAIN = ['inject', 'function', 'change', 'debug']
const POLL_MS = 50
const DEADLINE_MS = 120_000
/** The wait before each RSS reading, for the server to finish what the uploads left it to do. */
const SETTLE_MS = 3000

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The bench's flows, the same at every call: TABS tabs, then chains of an inject, a function, a
 * change and a debug node (Node-RED's core types: nothing to install), spread over the tabs,
 * `nodes` entries in all.
 */
export function benchFlows(nodes = NODES) {
  const chains = (nodes - TABS) / CHAIN.length
  if (!Number.isInteger(chains) || chains < 1)
    throw new Error(`${nodes} entries are not ${TABS} tabs and whole chains of ${CHAIN.length} nodes`)
  let next = 0
  const id = () => (0xb0000 + next++).toString(16).padStart(16, '0')
  const tabs = Array.from({ length: TABS }, (_, t) => ({
    id: id(),
    type: 'tab',
    label: `Line ${t + 1}`,
    disabled: false,
    info: '',
    env: [],
  }))
  const flows = [...tabs]
  for (let c = 0; c < chains; c++) {
    const z = tabs[c % TABS].id
    const y = 40 + 60 * Math.floor(c / TABS)
    const [inject, fn, change, debug] = CHAIN.map(() => id())
    flows.push(
      {
        id: inject,
        type: 'inject',
        z,
        name: '',
        props: [{ p: 'payload' }, { p: 'topic', vt: 'str' }],
        repeat: '',
        crontab: '',
        once: false,
        onceDelay: 0.1,
        topic: `line/${c}`,
        payload: '',
        payloadType: 'date',
        x: 130,
        y,
        wires: [[fn]],
      },
      {
        id: fn,
        type: 'function',
        z,
        name: `scale ${c}`,
        func: `msg.payload = { at: msg.payload, chain: ${c}, doubled: ${2 * c} };\nreturn msg;`,
        outputs: 1,
        timeout: 0,
        noerr: 0,
        initialize: '',
        finalize: '',
        libs: [],
        x: 330,
        y,
        wires: [[change]],
      },
      {
        id: change,
        type: 'change',
        z,
        name: '',
        rules: [{ t: 'set', p: 'topic', pt: 'msg', to: `line-${c}`, tot: 'str' }],
        action: '',
        property: '',
        from: '',
        to: '',
        reg: false,
        x: 530,
        y,
        wires: [[debug]],
      },
      {
        id: debug,
        type: 'debug',
        z,
        name: '',
        active: true,
        tosidebar: true,
        console: false,
        tostatus: false,
        complete: 'payload',
        targetType: 'msg',
        statusVal: '',
        statusType: 'auto',
        x: 730,
        y,
        wires: [],
      },
    )
  }
  return flows
}

/** The flows with the first inject node named `label`: one node changed, so a deploy changes something. */
const variant = (flows, label) => flows.map((node, i) => (i === TABS ? { ...node, name: label } : node))

const bearer = (token) => ({ authorization: `Bearer ${token}`, 'content-type': 'application/json' })

/** One full deploy of `flows` on a Node-RED's own admin API: ms from the request to its answer read. */
async function deployDirect(url, token, flows) {
  const body = JSON.stringify({ flows })
  const started = performance.now()
  const res = await fetch(`${url}/flows`, {
    method: 'POST',
    headers: { ...bearer(token), 'node-red-api-version': 'v2', 'node-red-deployment-type': 'full' },
    body,
  })
  const answer = await res.text()
  const ms = performance.now() - started
  if (res.status !== 200) throw new Error(`POST /flows at Node-RED answered ${res.status}: ${answer}`)
  return ms
}

/** Throws unless the Node-RED `instance` runs the flows whose first inject node is named `label`. */
async function runs(instance, label) {
  const token = await tokenAt(instance.url, 'node-red-admin')
  const res = await fetch(`${instance.url}/flows`, {
    headers: { ...bearer(token), 'node-red-api-version': 'v2' },
  })
  const { flows } = await res.json()
  const name = flows?.find((node) => node.type === 'inject')?.name
  if (res.status !== 200 || flows.length !== NODES || name !== label)
    throw new Error(`${instance.name} runs ${flows?.length} entries, its first inject named ${name}`)
}

/** Uploads `flows` as the next version of `name`; the answer, with the ms it took. */
async function upload(url, token, name, flows) {
  const body = JSON.stringify({ name, flows })
  const started = performance.now()
  const res = await fetch(`${url}/fleet/snapshots`, { method: 'POST', headers: bearer(token), body })
  const answer = await res.json()
  const ms = performance.now() - started
  if (res.status !== 201) throw new Error(`POST /fleet/snapshots answered ${res.status}: ${answer.message}`)
  if (answer.unknownTypes.length > 0) throw new Error(`unknown types: ${answer.unknownTypes.join(', ')}`)
  return { ...answer, ms }
}

/** Resolves once flowadmin knows every instance named (each polled or reported). */
async function allKnown(url, token, names) {
  const deadline = Date.now() + DEADLINE_MS
  while (Date.now() < deadline) {
    const known = await fetch(`${url}/fleet/instances`, { headers: bearer(token) }).then((res) => res.json())
    if (names.every((name) => known.some((entry) => entry.id === name))) return
    await sleep(POLL_MS)
  }
  throw new Error(`flowadmin did not know ${names.join(', ')} in time`)
}

/**
 * Rolls snapshot `snapshot` out to the group; resolves with the ms from the request to the first
 * answer of `GET /fleet/rollouts/{id}` (asked every POLL_MS) saying `succeeded`. A rollout that
 * fails, stops, reaches another count of instances or outlasts the deadline throws.
 */
async function rollOut(url, token, snapshot, count) {
  const body = JSON.stringify({ snapshot, strategy: { kind: 'all' } })
  const started = performance.now()
  const res = await fetch(`${url}/fleet/groups/${GROUP}/rollouts`, {
    method: 'POST',
    headers: bearer(token),
    body,
  })
  const created = await res.json()
  if (res.status !== 201) throw new Error(`POST rollouts answered ${res.status}: ${created.message}`)
  if (created.instances.length !== count)
    throw new Error(`the rollout reaches ${created.instances.join(', ')}, not ${count} instances`)
  for (;;) {
    const view = await fetch(`${url}/fleet/rollouts/${created.id}`, { headers: bearer(token) })
    const rollout = await view.json()
    if (view.status !== 200) throw new Error(`GET /fleet/rollouts/{id} answered ${view.status}`)
    if (rollout.state === 'succeeded') return performance.now() - started
    if (rollout.state === 'failed' || rollout.state === 'stopped')
      throw new Error(`rollout ${created.id} ${rollout.state}: ${rollout.reason}`)
    if (performance.now() - started > DEADLINE_MS)
      throw new Error(
        `rollout ${created.id} still ${rollout.state}, waiting for ${rollout.waiting.join(', ')}`,
      )
    await sleep(POLL_MS)
  }
}

/**
 * flowadmin's RSS growth per snapshot: RSS after SETTLE_MS, `count` uploads of the flows (each a
 * new version, one node changed), RSS after SETTLE_MS again; the growth ÷ count, in KB. The
 * server's garbage is not collected on demand: what the uploads left uncollected counts too.
 */
async function rssPerSnapshot(server, token, flows, count) {
  await sleep(SETTLE_MS)
  const before = memory(server.child.pid).rssMb
  for (let i = 0; i < count; i++)
    await upload(server.url, token, 'bench-memory', variant(flows, `memory ${i}`))
  await sleep(SETTLE_MS)
  const after = memory(server.child.pid).rssMb
  return ((after - before) * 1024) / count
}

const sha256 = (text) => createHash('sha256').update(text).digest('hex')

/** Starts the built flowadmin in fleet mode with the group `bench`; `storage`: 'memory' or 'sqlite'. */
async function startFlowadmin(storage) {
  const hash = async (secret) => argon2.hash(secret, ARGON2_OPTIONS)
  return startBuiltServer(`bench-rollout-${storage}`, {
    uiHost: '127.0.0.1',
    storage,
    auditLog: 'off',
    fleet: { modules: true, groups: { [GROUP]: [`${GROUP}-*`] } },
    adminAuth: {
      type: 'credentials',
      users: [{ username: USER.username, password: await hash(USER.password), permissions: '*' }],
      // A machine secret's digest, as `flowadmin secret` gives it.
      resourceServers: [
        { id: RESOURCE_SERVER.id, secret: `sha256:${sha256(RESOURCE_SERVER.secret)}`, fleet: true },
      ],
    },
  })
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]

/**
 * The scenario, for run.mjs's local scenarios. `quick`: 2 instances, one timed rollout, two timed
 * deploys and 3 snapshots for the memory, so the CI smoke stays short.
 */
export function createRolloutScenario({ quick, log }) {
  const size = quick ? 2 : 5
  const rollouts = quick ? 1 : 5
  const directRuns = quick ? 2 : 5
  const stored = quick ? 3 : 20
  return {
    id: 'fleet-rollout',
    title: `Fleet mode: a rollout of a ${NODES.toLocaleString('en-US')}-node snapshot to ${size} Node-RED instances, beside one instance's own POST /flows`,
    local: true,
    async measure({ root, folder }) {
      const redJs = await installNodeRed(log)
      const helper = new URL('packages/node-red/index.js', root).pathname
      const flows = benchFlows()
      const home = mkdtempSync(join(folder, 'fleet-rollout-'))
      const server = await startFlowadmin('memory')
      const instances = []
      let result
      try {
        const token = await tokenAt(server.url, 'service-admin')
        for (let i = 1; i <= size; i++) {
          const name = `${GROUP}-${i}`
          instances.push(
            await startInstance({ redJs, folder: home, name, url: server.url, helper, module: false }),
          )
        }
        await allKnown(
          server.url,
          token,
          instances.map((instance) => instance.name),
        )
        // Node-RED alone: one instance's own full deploys, each replacing the flows of the one before.
        const own = await tokenAt(instances[0].url, 'node-red-admin')
        await deployDirect(instances[0].url, own, variant(flows, 'direct warm-up'))
        const directMs = []
        const directCpuMs = []
        for (let i = 0; i < directRuns; i++) {
          const cpu = cpuMs(instances[0].pid)
          directMs.push(await deployDirect(instances[0].url, own, variant(flows, `direct ${i}`)))
          directCpuMs.push(cpuMs(instances[0].pid) - cpu)
        }
        // A first rollout brings every instance to the flows; then each timed one replaces them.
        const first = await upload(server.url, token, 'bench-rollout', variant(flows, 'rollout warm-up'))
        await rollOut(server.url, token, first.id, size)
        const rolloutMs = []
        const uploadMs = []
        const rolloutCpuMs = { flowadmin: [], nodeRed: [] }
        const nodeRedCpu = () => instances.reduce((sum, instance) => sum + cpuMs(instance.pid), 0)
        for (let i = 0; i < rollouts; i++) {
          const snapshot = await upload(server.url, token, 'bench-rollout', variant(flows, `rollout ${i}`))
          uploadMs.push(snapshot.ms)
          const [flowadminBefore, nodeRedBefore] = [cpuMs(server.child.pid), nodeRedCpu()]
          rolloutMs.push(await rollOut(server.url, token, snapshot.id, size))
          rolloutCpuMs.flowadmin.push(cpuMs(server.child.pid) - flowadminBefore)
          rolloutCpuMs.nodeRed.push(nodeRedCpu() - nodeRedBefore)
          log(`fleet-rollout: rollout ${i + 1} of ${rollouts}: ${rolloutMs.at(-1).toFixed(0)} ms`)
        }
        await runs(instances.at(-1), `rollout ${rollouts - 1}`)
        const memoryKb = await rssPerSnapshot(server, token, flows, stored)
        result = {
          instances: size,
          nodes: first.nodes,
          bytes: first.bytes,
          directMs,
          directCpuMs,
          rolloutMs,
          rolloutCpuMs,
          uploadMs,
          stored,
          rssPerSnapshotKb: { memory: memoryKb },
        }
      } finally {
        for (const instance of instances) await instance.stop()
        await server.stop()
      }
      // The same uploads on SQLite, the default store, with no instance connected.
      const onDisk = await startFlowadmin('sqlite')
      try {
        const token = await tokenAt(onDisk.url, 'service-admin')
        await upload(onDisk.url, token, 'bench-memory', variant(flows, 'warm-up'))
        result.rssPerSnapshotKb.sqlite = await rssPerSnapshot(onDisk, token, flows, stored)
      } finally {
        await onDisk.stop()
      }
      return result
    },
    describe: (result) =>
      `rollout to ${result.instances}: median ${median(result.rolloutMs).toFixed(0)} ms, max ${Math.max(...result.rolloutMs).toFixed(0)} ms; own POST /flows median ${median(result.directMs).toFixed(0)} ms`,
    combine: combineRollouts,
    rows: rolloutRows,
  }
}
