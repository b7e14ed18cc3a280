// A fleet of Node-RED instances asking flowadmin about their requests (`fleet`, `fleet-2i`), and
// how long a revocation at one instance takes to be refused at another (`propagation`).
import http from 'node:http'
import { RESOURCE_SERVER } from './flowadmin.mjs'
import { cpuOfAll, httpRequest, runOpenLoop, summarise } from './load.mjs'
import { memory, resetPeak } from './proc.mjs'

const FORM = 'application/x-www-form-urlencoded'

/** RFC 6749 §2.3.1: the client's id and secret, each form-encoded, joined and base64'd. */
export function basicAuthorization({ id, secret }) {
  const form = (text) => new URLSearchParams([['', text]]).toString().slice(1)
  return `Basic ${Buffer.from(`${form(id)}:${form(secret)}`).toString('base64')}`
}

/**
 * `clients` resource servers (Node-RED instances), each with a keep-alive agent of its own (its own
 * connections), introspecting at `rate` per second in all (open loop: sent on schedule whatever
 * the answers' pace), client `c` asking about `tokens[c % tokens.length]` on `servers[c %
 * servers.length]`. Returns the summary (latency from send to the end of the answer), with the
 * servers' CPU per introspection and each server's resident memory.
 */
export async function runFleet({ servers, tokens, clients, rate, durationMs }) {
  const authorization = basicAuthorization(RESOURCE_SERVER)
  const fleet = Array.from({ length: clients }, (_, c) => {
    const server = servers[c % servers.length]
    const body = `token=${encodeURIComponent(tokens[c % tokens.length])}`
    return {
      agent: new http.Agent({ keepAlive: true, maxSockets: 4 }),
      options: {
        host: '127.0.0.1',
        port: server.port,
        path: '/auth/introspect',
        method: 'POST',
        headers: { authorization, 'content-type': FORM, 'content-length': Buffer.byteLength(body) },
      },
      body,
    }
  })
  const pids = servers.map((server) => server.pid)
  for (const pid of pids) resetPeak(pid)
  let inactive = 0
  const cpuStart = cpuOfAll(pids)
  const send = (n) => {
    const client = fleet[n % clients]
    return httpRequest({ ...client.options, agent: client.agent }, { body: client.body, read: true })
  }
  const check = ({ status, text }) => {
    if (status === 200 && !text.includes('"active":true')) inactive++
  }
  const { tally, sent, elapsedMs, clientLoopDelay } = await runOpenLoop({
    rate,
    durationMs,
    send,
    check,
  }).finally(() => {
    for (const client of fleet) client.agent.destroy()
  })
  const rss = pids.map((pid) => memory(pid))
  return {
    ...summarise({ ...tally, elapsedMs, cpuMs: cpuOfAll(pids) - cpuStart }),
    sent,
    inactive,
    clients,
    rate,
    instances: servers.length,
    rssMb: rss.map((m) => m.rssMb),
    fleetRssPeakMb: Math.max(...rss.map((m) => m.peakMb)),
    clientLoopDelay,
  }
}

/**
 * Revocations at `a`, each of a token `b` answered just before (so `b` holds it): for each, the
 * time from `a`'s answer to the first refusal at `b`, which is asked again and again meanwhile on
 * one keep-alive connection. One token of `pool` a sample, for `durationMs`.
 */
export async function runPropagation({ a, b, pool, durationMs }) {
  const agentA = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const agentB = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const ask = async (server, agent, { method = 'GET', path, headers, body }) =>
    (await httpRequest({ host: '127.0.0.1', port: server.port, method, path, headers, agent }, { body }))
      .status
  const settingsAt = (server, agent, token) =>
    ask(server, agent, { path: '/settings', headers: { authorization: `Bearer ${token}` } })
  const delays = []
  /** The time of one ask at the other instance (before each revocation): the floor of a delay. */
  const asks = []
  const statuses = {}
  let errors = 0
  let polls = 0
  const cpuStart = cpuOfAll([a.pid, b.pid])
  const start = performance.now()
  while (performance.now() - start < durationMs && pool.next < pool.tokens.length) {
    const token = pool.tokens[pool.next++]
    try {
      const asked = performance.now()
      const before = await settingsAt(b, agentB, token)
      asks.push(performance.now() - asked)
      if (before !== 200) {
        errors++
        continue
      }
      const body = `token=${encodeURIComponent(token)}`
      const revoked = await ask(a, agentA, {
        method: 'POST',
        path: '/auth/revoke',
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': FORM,
          'content-length': Buffer.byteLength(body),
        },
        body,
      })
      const acknowledged = performance.now()
      statuses[revoked] = (statuses[revoked] ?? 0) + 1
      if (revoked !== 200) continue
      for (;;) {
        polls++
        const status = await settingsAt(b, agentB, token)
        if (status === 401) break
        if (status !== 200) throw new Error(`GET /settings at the other instance answered ${status}`)
        if (performance.now() - acknowledged > 10_000) throw new Error('a revocation not refused after 10 s')
      }
      delays.push(performance.now() - acknowledged)
    } catch (error) {
      if (String(error.message).startsWith('a revocation')) throw error
      errors++
    }
  }
  agentA.destroy()
  agentB.destroy()
  const elapsedMs = performance.now() - start
  return {
    ...summarise({
      latencies: delays,
      statuses,
      errors,
      elapsedMs,
      cpuMs: cpuOfAll([a.pid, b.pid]) - cpuStart,
    }),
    polls,
    ask: summarise({ latencies: asks, statuses: {}, errors: 0, elapsedMs, cpuMs: Number.NaN }),
    poolExhausted: pool.next >= pool.tokens.length,
  }
}
