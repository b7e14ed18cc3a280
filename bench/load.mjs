// Load generators: closed loops (autocannon against one URL; workers of fetch whose requests may
// go to several servers) and the open loop (requests sent on schedule whatever the answers' pace),
// each counting only the answers inside its measured window. Latencies are exact per response
// (hrtime, fractions of a millisecond): autocannon's own histogram keeps whole milliseconds only,
// so its `response` event is recorded instead.
import http from 'node:http'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import autocannon from 'autocannon'
import { cpuMs } from './proc.mjs'

/** The answers of a window: each one's latency (ms) and status, and the requests that got none. */
function createTally() {
  const tally = {
    latencies: [],
    statuses: {},
    errors: 0,
    answer(status, ms) {
      tally.latencies.push(ms)
      tally.statuses[status] = (tally.statuses[status] ?? 0) + 1
    },
  }
  return tally
}

/** CPU time of every process of `pids` together, in milliseconds. */
export const cpuOfAll = (pids) => pids.reduce((sum, pid) => sum + cpuMs(pid), 0)

/** The load generator's own CPU time (this process) since `clientStart`, a process.cpuUsage(). */
function clientCpuSince(clientStart) {
  const client = process.cpuUsage(clientStart)
  return (client.user + client.system) / 1000
}

/**
 * Adds the load generator's CPU time to `result`, in all and per answer: it tells a saturated
 * server from a saturated client.
 */
function withClientCpu(result, clientCpuMs) {
  result.clientCpuMs = clientCpuMs
  result.clientCpuPerRequest = result.count > 0 ? clientCpuMs / result.count : Number.NaN
  return result
}

/**
 * Runs autocannon against `url` for `durationMs` (or until `amount` responses), closed loop, one
 * request in flight per connection. Only the responses inside the window count; the server's CPU
 * time (`pid`, and `peerPids`: processes that serve its requests with it) is read at both ends of
 * the window, the peers' also on their own (`peerCpuMs`).
 * `requests` / `setupClient` are autocannon's (per-connection request lists, dynamic requests).
 */
export function runLoad({
  url,
  pid,
  peerPids = [],
  durationMs,
  connections,
  method,
  headers,
  body,
  requests,
  setupClient,
  amount,
}) {
  return new Promise((resolve, reject) => {
    const tally = createTally()
    let open = true
    const cpuStart = cpuMs(pid)
    const peerCpuStart = cpuOfAll(peerPids)
    const clientStart = process.cpuUsage()
    const start = process.hrtime.bigint()
    const settings = {
      url,
      connections: amount === undefined ? connections : Math.min(connections, amount),
      pipelining: 1,
      method,
      headers,
      body,
      requests,
      setupClient,
      // Bounded twice: the window below stops it, the duration is only a backstop.
      duration: Math.ceil(durationMs / 1000) + 10,
      amount,
      sampleInt: 100,
      timeout: 10,
    }
    // autocannon takes an option given as undefined for a value: leave such options out.
    for (const key of Object.keys(settings)) if (settings[key] === undefined) delete settings[key]
    const instance = autocannon(settings, (error) => {
      if (error) reject(error)
      else close()
      resolve(result)
    })
    let result
    const close = () => {
      if (!open) return
      open = false
      clearTimeout(timer)
      const elapsedMs = Number(process.hrtime.bigint() - start) / 1e6
      const clientCpuMs = clientCpuSince(clientStart)
      const peerCpuMs = cpuOfAll(peerPids) - peerCpuStart
      result = summarise({ ...tally, elapsedMs, cpuMs: cpuMs(pid) - cpuStart + peerCpuMs })
      if (peerPids.length > 0) {
        result.peerCpuMs = peerCpuMs
        result.peerCpuPerRequest = result.count > 0 ? peerCpuMs / result.count : Number.NaN
      }
      withClientCpu(result, clientCpuMs)
      instance.stop()
    }
    const timer = setTimeout(close, durationMs)
    instance.on('response', (_client, status, _bytes, ms) => {
      if (!open) return
      tally.answer(status, ms)
      // A bounded run (`amount`) ends with its last answer, not at the next sampling tick.
      if (amount !== undefined && tally.latencies.length + tally.errors >= amount) close()
    })
    instance.on('reqError', () => {
      if (open) tally.errors++
    })
  })
}

/**
 * A closed loop of `connections` workers of fetch for `durationMs`; worker `w`'s `n`-th request is
 * `request(w, n)` ({url, init}), so a worker's requests may go to several servers. Only answers
 * inside the window count; the server CPU is that of every process of `pids`.
 */
export async function runWorkers({ pids, connections, durationMs, request }) {
  const tally = createTally()
  let open = true
  const cpuStart = cpuOfAll(pids)
  const clientStart = process.cpuUsage()
  const start = performance.now()
  const timer = setTimeout(() => {
    open = false
  }, durationMs)
  await Promise.all(
    Array.from({ length: connections }, async (_, worker) => {
      for (let n = 0; open; n++) {
        const { url, init } = request(worker, n)
        const sent = performance.now()
        try {
          const response = await fetch(url, { ...init, signal: AbortSignal.timeout(15_000) })
          await response.arrayBuffer()
          if (!open) break
          tally.answer(response.status, performance.now() - sent)
        } catch {
          if (open) tally.errors++
        }
      }
    }),
  )
  clearTimeout(timer)
  const elapsedMs = Math.min(performance.now() - start, durationMs)
  const clientCpuMs = clientCpuSince(clientStart)
  return withClientCpu(summarise({ ...tally, elapsedMs, cpuMs: cpuOfAll(pids) - cpuStart }), clientCpuMs)
}

/**
 * One request (node:http `options`, with its agent) sending `body`: resolves with the answer's
 * status, and its text when `read`; rejects when the request fails or no answer comes within 10 s.
 */
export function httpRequest(options, { body, read = false } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(options, (res) => {
      let text = ''
      if (read) {
        res.setEncoding('utf8')
        res.on('data', (chunk) => {
          text += chunk
        })
      } else res.resume()
      res.on('end', () => resolve({ status: res.statusCode, text }))
      res.on('error', reject)
    })
    req.setTimeout(10_000, () => req.destroy(new Error('no answer within 10 s')))
    req.on('error', reject)
    req.end(body)
  })
}

/**
 * The open loop: `rate` requests per second for `durationMs`, sent on schedule whatever the
 * answers' pace; the `n`-th is `send(n)`, a promise of its answer (see {@link httpRequest}), which
 * `check(answer)` sees. Each one's latency runs from its send to the end of its answer. Resolves
 * once every request is answered (or 15 s after the window) with the tally, how many were sent,
 * the time it took and the load generator's own event loop delay: an answer read late is
 * measured late, so its delay is the floor of the latencies.
 */
export function runOpenLoop({ rate, durationMs, send, check }) {
  const ownDelay = monitorEventLoopDelay({ resolution: 1 })
  ownDelay.enable()
  const tally = createTally()
  let sent = 0
  let pending = 0
  const total = Math.floor((rate * durationMs) / 1000)
  const start = performance.now()
  return new Promise((resolve) => {
    let finished = false
    const finish = () => {
      if (finished) return
      finished = true
      clearInterval(ticker)
      clearTimeout(backstop)
      ownDelay.disable()
      const clientLoopDelay = { p99: ownDelay.percentile(99) / 1e6, max: ownDelay.max / 1e6 }
      resolve({ tally, sent, elapsedMs: performance.now() - start, clientLoopDelay })
    }
    const settled = () => {
      pending--
      if (sent === total && pending === 0) finish()
    }
    const fire = () => {
      const t0 = process.hrtime.bigint()
      pending++
      send(sent++).then(
        (answer) => {
          tally.answer(answer.status, Number(process.hrtime.bigint() - t0) / 1e6)
          check?.(answer)
          settled()
        },
        () => {
          tally.errors++
          settled()
        },
      )
    }
    const ticker = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - start) * rate) / 1000))
      while (sent < due) fire()
      if (sent === total) clearInterval(ticker)
    }, 1)
    // Answers that never come must not hold the bench.
    const backstop = setTimeout(finish, durationMs + 15_000)
  })
}

/** GET requests to `path` of the server on 127.0.0.1:`port` in the open loop (see {@link runOpenLoop}). */
export async function runPaced({ port, path, headers, rate, durationMs }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
  const send = () => httpRequest({ host: '127.0.0.1', port, path, headers, agent })
  try {
    const { tally, sent, elapsedMs, clientLoopDelay } = await runOpenLoop({ rate, durationMs, send })
    return { ...summarise({ ...tally, elapsedMs, cpuMs: Number.NaN }), sent, clientLoopDelay }
  } finally {
    agent.destroy()
  }
}

/** Throughput, exact percentiles and CPU per response. */
export function summarise({ latencies, statuses, errors, elapsedMs, cpuMs }) {
  const sorted = Float64Array.from(latencies).sort()
  const count = sorted.length
  const ok = Object.entries(statuses).reduce((sum, [code, n]) => (code.startsWith('2') ? sum + n : sum), 0)
  return {
    count,
    ok,
    non2xx: count - ok,
    errors,
    statuses,
    elapsedMs,
    rps: (count * 1000) / elapsedMs,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: count > 0 ? sorted[count - 1] : Number.NaN,
    cpuMs,
    cpuPerRequest: count > 0 ? cpuMs / count : Number.NaN,
    latencies: sorted,
  }
}

/** The nearest-rank percentile of sorted values. */
export function percentile(sorted, q) {
  if (sorted.length === 0) return Number.NaN
  const rank = Math.max(1, Math.ceil(q * sorted.length))
  return sorted[rank - 1]
}

/**
 * Waits until the server's CPU time stays flat for `quietMs` (requests queued by an ended load are
 * done), or `maxMs` passed. Returns how long it waited.
 */
export async function waitForIdle(pid, { quietMs = 200, maxMs = 30_000, stepMs = 50 } = {}) {
  const start = performance.now()
  let last = cpuMs(pid)
  let quietSince = start
  while (performance.now() - start < maxMs) {
    await new Promise((resolve) => setTimeout(resolve, stepMs))
    const now = cpuMs(pid)
    // Below one clock tick per step counts as idle.
    if (now - last > 10) quietSince = performance.now()
    last = now
    if (performance.now() - quietSince >= quietMs) break
  }
  return performance.now() - start
}
