// Load generators. Latencies are exact per response (hrtime, fractions of a millisecond): autocannon's
// own histogram keeps whole milliseconds only, so its `response` event is recorded instead.
import http from 'node:http'
import { monitorEventLoopDelay } from 'node:perf_hooks'
import autocannon from 'autocannon'
import { cpuMs } from './proc.mjs'

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
    const latencies = []
    const statuses = {}
    let errors = 0
    let open = true
    const peersCpu = () => peerPids.reduce((sum, peer) => sum + cpuMs(peer), 0)
    const cpuStart = cpuMs(pid)
    const peerCpuStart = peersCpu()
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
      const client = process.cpuUsage(clientStart)
      const peerCpuMs = peersCpu() - peerCpuStart
      result = summarise({ latencies, statuses, errors, elapsedMs, cpuMs: cpuMs(pid) - cpuStart + peerCpuMs })
      if (peerPids.length > 0) {
        result.peerCpuMs = peerCpuMs
        result.peerCpuPerRequest = result.count > 0 ? peerCpuMs / result.count : Number.NaN
      }
      // The load generator's own CPU (this process), to tell a saturated server from a saturated client.
      result.clientCpuMs = (client.user + client.system) / 1000
      result.clientCpuPerRequest = result.count > 0 ? result.clientCpuMs / result.count : Number.NaN
      instance.stop()
    }
    const timer = setTimeout(close, durationMs)
    instance.on('response', (_client, status, _bytes, ms) => {
      if (!open) return
      latencies.push(ms)
      statuses[status] = (statuses[status] ?? 0) + 1
      // A bounded run (`amount`) ends with its last answer, not at the next sampling tick.
      if (amount !== undefined && latencies.length + errors >= amount) close()
    })
    instance.on('reqError', () => {
      if (open) errors++
    })
  })
}

/**
 * Sends GET requests at a fixed rate (open loop, whatever the answers' pace) for `durationMs` and
 * records each one's time from send to the end of its response.
 */
export function runPaced({ port, path, headers, rate, durationMs }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 })
  // The load generator's own event loop: a response it reads late is measured late, so this is
  // the floor of the latencies it reports.
  const ownDelay = monitorEventLoopDelay({ resolution: 1 })
  ownDelay.enable()
  const latencies = []
  const statuses = {}
  let errors = 0
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
      agent.destroy()
      ownDelay.disable()
      const elapsedMs = performance.now() - start
      const clientLoopDelay = { p99: ownDelay.percentile(99) / 1e6, max: ownDelay.max / 1e6 }
      resolve({
        ...summarise({ latencies, statuses, errors, elapsedMs, cpuMs: Number.NaN }),
        sent,
        clientLoopDelay,
      })
    }
    const fire = () => {
      sent++
      pending++
      const t0 = process.hrtime.bigint()
      const done = (status) => {
        pending--
        if (status === null) errors++
        else {
          latencies.push(Number(process.hrtime.bigint() - t0) / 1e6)
          statuses[status] = (statuses[status] ?? 0) + 1
        }
        if (sent === total && pending === 0) finish()
      }
      const req = http.request({ host: '127.0.0.1', port, path, headers, agent }, (res) => {
        res.resume()
        res.on('end', () => done(res.statusCode))
        res.on('error', () => done(null))
      })
      req.setTimeout(10_000, () => req.destroy())
      req.on('error', () => done(null))
      req.end()
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
