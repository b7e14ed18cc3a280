// A child process of lean fleet agents (see fleet-agents.mjs): each speaks the protocol of the
// helper's poll loop (packages/node-red/lib/fleet-poll.js) on a keep-alive connection of its own:
// one report when it joins, then `GET /fleet/instances/{id}/desired` held with `If-None-Match` and
// `Prefer: wait=N` (the hold the desired state names), a pause of 250–750 ms between rounds, and
// backoff while flowadmin fails. It applies nothing: it notes when each new version arrived
// (the machine's monotonic clock, the same in every process) for the parent to read.

import { readFileSync } from 'node:fs'
import http from 'node:http'

/** The round pause of the helper: 250 ms, plus up to 500 ms of jitter. */
const pause = () => 250 + Math.floor(Math.random() * 500)
/** How long an answer may come after its hold (the helper's ANSWER_SLACK_MS). */
const ANSWER_SLACK_MS = 15_000
/** Joins running at once in this process. */
const JOINING = 25
/** Descriptors this process needs besides one per agent. */
const SPARE_FDS = 100

/** Milliseconds on the monotonic clock (CLOCK_MONOTONIC: one clock for every process here). */
const now = () => Number(process.hrtime.bigint()) / 1e6
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

let stopped = false
const agents = []
const statuses = {}
let errors = 0
/** The polls that got no answer, by what happened. */
const unanswered = {}

/** One request on `agent`'s connection: status, ETag and body text; rejects when it fails or times out. */
function call(agent, { path, method = 'GET', headers, body, timeoutMs }) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port: agent.port, path, method, headers, agent: agent.http },
      (res) => {
        let text = ''
        res.setEncoding('utf8')
        res.on('data', (chunk) => {
          text += chunk
        })
        res.on('end', () => resolve({ status: res.statusCode, etag: res.headers.etag ?? null, text }))
        res.on('error', reject)
      },
    )
    req.setTimeout(timeoutMs, () => req.destroy(new Error('no answer in time')))
    req.on('error', reject)
    req.end(body)
  })
}

/** A new desired state arrived: noted, with the time its answer was read. */
function received(agent, answer) {
  const desired = JSON.parse(answer.text)
  const at = now()
  agent.etag = answer.etag ?? `"${desired.version}"`
  agent.hold = Number.isInteger(desired.hold) && desired.hold >= 1 ? desired.hold : 25
  agent.version = desired.version
  agent.log.push({ version: desired.version, at })
  if (agent.log.length > 16) agent.log.shift()
  check()
}

async function join(agent, { authorization, report }) {
  const base = `/fleet/instances/${agent.id}`
  const body = JSON.stringify({ ...report, sequence: Date.now() })
  const posted = await call(agent, {
    path: `${base}/report`,
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
    body,
    timeoutMs: 30_000,
  })
  if (posted.status !== 204) throw new Error(`the report at join answered ${posted.status} ${posted.text}`)
  const first = await call(agent, {
    path: `${base}/desired`,
    headers: { authorization, accept: 'application/json' },
    timeoutMs: 30_000,
  })
  if (first.status !== 200) throw new Error(`the first poll answered ${first.status} ${first.text}`)
  received(agent, first)
}

/** The agent's poll loop, until stopped. */
async function run(agent, { authorization }) {
  let failures = 0
  while (!stopped) {
    await sleep(failures === 0 ? pause() : Math.random() * Math.min(30_000, 250 * 2 ** failures))
    if (stopped) return
    agent.polls++
    try {
      const answer = await call(agent, {
        path: `/fleet/instances/${agent.id}/desired`,
        headers: {
          authorization,
          accept: 'application/json',
          'if-none-match': agent.etag,
          prefer: `wait=${agent.hold}`,
        },
        timeoutMs: agent.hold * 1000 + ANSWER_SLACK_MS,
      })
      statuses[answer.status] = (statuses[answer.status] ?? 0) + 1
      if (answer.status === 200) received(agent, answer)
      failures = answer.status === 200 || answer.status === 304 ? 0 : failures + 1
    } catch (error) {
      if (stopped) return
      errors++
      unanswered[error.message] = (unanswered[error.message] ?? 0) + 1
      failures++
    }
  }
}

/** The wait the parent asked for: every agent with a version other than `old` read after `after`. */
let reach = null

/** The first receipt of each agent after `after` of a version other than `old`, or undefined. */
const arrivalOf = (agent, { after, old }) =>
  agent.log.find((entry) => entry.at > after && entry.version !== old)

function check() {
  if (reach === null) return
  const arrivals = agents.map((agent) => arrivalOf(agent, reach))
  if (arrivals.some((arrival) => arrival === undefined) && now() < reach.deadline) return
  answerReach(arrivals)
}

function answerReach(arrivals) {
  const reached = arrivals.filter(Boolean)
  clearTimeout(reach.timer)
  reach = null
  process.send({
    type: 'reached',
    times: reached.map((arrival) => arrival.at),
    versions: [...new Set(reached.map((arrival) => arrival.version))],
    missing: arrivals.length - reached.length,
  })
}

/** This process's soft limit of open files, or null when it cannot be read. */
function openFileLimit() {
  const line = readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((text) => text.startsWith('Max open files'))
  const soft = line?.split(/\s{2,}/)[1]
  return soft === 'unlimited' ? Number.POSITIVE_INFINITY : Number(soft) || null
}

process.on('message', async (message) => {
  if (message.type === 'join') {
    const limit = openFileLimit()
    const needed = message.agents.length + SPARE_FDS
    if (limit !== null && limit < needed) {
      process.send({
        type: 'failed',
        message: `an agents' process may open ${limit} files (ulimit -n), and needs ${needed} for ${message.agents.length} agents: raise the limit (ulimit -n ${needed}) and run again`,
      })
      return
    }
    for (const { id, port } of message.agents) {
      agents.push({
        id,
        port,
        http: new http.Agent({ keepAlive: true, maxSockets: 1 }),
        etag: null,
        hold: 25,
        version: null,
        log: [],
        polls: 0,
      })
    }
    try {
      let next = 0
      await Promise.all(
        Array.from({ length: JOINING }, async () => {
          while (next < agents.length) await join(agents[next++], message)
        }),
      )
    } catch (error) {
      process.send({ type: 'failed', message: `an agent could not join: ${error.message}` })
      return
    }
    for (const agent of agents) void run(agent, message)
    process.send({
      type: 'joined',
      versions: [...new Set(agents.map((agent) => agent.version))],
      hold: Math.max(...agents.map((agent) => agent.hold)),
    })
  } else if (message.type === 'reach') {
    reach = { ...message, timer: setTimeout(check, Math.max(0, message.deadline - now()) + 1) }
    check()
  } else if (message.type === 'stats') {
    process.send({
      type: 'stats',
      polls: agents.reduce((sum, agent) => sum + agent.polls, 0),
      statuses,
      errors,
      unanswered,
    })
  } else if (message.type === 'stop') {
    stopped = true
    for (const agent of agents) agent.http.destroy()
    process.send({ type: 'stopped' }, () => process.exit(0))
  }
})
process.on('disconnect', () => process.exit(0))
