#!/usr/bin/env node
// Logins under attack, against the built server: a flood of concurrent wrong-password logins from
// many addresses while the real user, who logged in before from her usual address, logs in again.
// Prints how the flood was answered and how fast, how long she waited, and the server's peak RSS.
// Not a test: the figures depend on the machine and what else runs on it.
//
//   pnpm bench:flood [--requests 600] [--addresses 300] [--delay-ms 200]
//
// Each address is its own loopback address (127.1.x.y, all of 127.0.0.0/8 is loopback on Linux),
// every request its own connection. Targets: every flood request answered (401, 429 or 503)
// within 5 s; her login within 1 s; peak RSS under 140 MB.
import { request } from 'node:http'
import { parseArgs } from 'node:util'
import { hashPassword } from '@flowadmin/server'
import { quantile, startBuiltServer } from './built-server.mjs'
import { machine, memory } from './proc.mjs'

const HER_ADDRESS = '127.0.0.2'
const PASSWORD = 'her-real-password'
const TARGETS = { floodMs: 5_000, herMs: 1_000, peakRssMb: 140 }

const { values } = parseArgs({
  options: {
    requests: { type: 'string', default: '600' },
    addresses: { type: 'string', default: '300' },
    'delay-ms': { type: 'string', default: '200' },
  },
})
const requests = Number(values.requests)
const addresses = Number(values.addresses)
const delayMs = Number(values['delay-ms'])
if (![requests, addresses, delayMs].every((n) => Number.isInteger(n) && n >= 0) || addresses < 1) {
  console.error('usage: pnpm bench:flood [--requests N] [--addresses N] [--delay-ms N]')
  process.exit(2)
}

/** The i-th flood address: 127.1.0.1, 127.1.0.2, ... */
const addressOf = (i) => `127.1.${((i + 1) >> 8) & 255}.${(i + 1) & 255}`

/** One login over its own connection from `from`: status and milliseconds to the end of the answer. */
function login(url, from, password) {
  const body = new URLSearchParams({
    client_id: 'service-admin',
    grant_type: 'password',
    scope: '*',
    username: 'admin',
    password,
  }).toString()
  const { hostname, port } = new URL(url)
  const started = performance.now()
  return new Promise((resolve) => {
    const failed = (error) =>
      resolve({ status: `error ${error.code ?? error.message}`, ms: performance.now() - started })
    const answered = (res) => {
      res.resume()
      res.on('end', () =>
        resolve({
          status: res.statusCode,
          ms: performance.now() - started,
          retryAfter: res.headers['retry-after'],
        }),
      )
    }
    try {
      const req = request(
        {
          host: hostname,
          port,
          method: 'POST',
          path: '/auth/token',
          localAddress: from,
          agent: false,
          headers: { 'content-type': 'application/x-www-form-urlencoded', connection: 'close' },
        },
        answered,
      )
      req.on('error', failed)
      req.end(body)
    } catch (error) {
      failed(error)
    }
  })
}

const { url, child, stop } = await startBuiltServer('flood', {
  auditLog: 'off',
  adminAuth: {
    type: 'credentials',
    users: [{ username: 'admin', password: await hashPassword(PASSWORD), permissions: '*' }],
  },
})
// The server goes with this script, however it ends.
process.on('exit', () => child.kill('SIGKILL'))

const ms = (value) => `${Math.round(value)} ms`

try {
  // She logged in before from her usual address: that pair is known.
  const before = await login(url, HER_ADDRESS, PASSWORD)
  if (before.status !== 200) throw new Error(`her first login answered ${before.status}`)
  const idle = memory(child.pid)

  let peakSampled = idle.rssMb
  const sampler = setInterval(() => {
    peakSampled = Math.max(peakSampled, memory(child.pid).rssMb)
  }, 10)
  const started = performance.now()
  const flood = Array.from({ length: requests }, (_, i) => login(url, addressOf(i % addresses), `guess-${i}`))
  await new Promise((resolve) => setTimeout(resolve, delayMs))
  const hers = await login(url, HER_ADDRESS, PASSWORD)
  const answers = await Promise.all(flood)
  const wallMs = performance.now() - started
  clearInterval(sampler)
  const after = memory(child.pid)

  const byStatus = new Map()
  for (const answer of answers) byStatus.set(answer.status, (byStatus.get(answer.status) ?? 0) + 1)
  const times = answers.map((answer) => answer.ms).sort((a, b) => a - b)
  const slowest = times.at(-1) ?? 0
  const honest = answers.every((answer) => [401, 429, 503].includes(answer.status))
  const retryAfter = answers.every((answer) => answer.status !== 503 || /^\d+$/.test(answer.retryAfter ?? ''))
  const peakMb = Math.max(after.peakMb, peakSampled)
  const m = machine()

  console.log(
    `login flood: ${requests} concurrent wrong logins for admin from ${addresses} addresses; she logs in ${delayMs} ms in`,
  )
  console.log(`node ${m.node}, ${m.cpus} CPUs (${m.model}), load average ${m.loadavg.join(' ')}`)
  console.log(
    `flood answers: ${[...byStatus]
      .sort()
      .map(([status, n]) => `${n} × ${status}`)
      .join(', ')}` + `${retryAfter ? '' : ' (a 503 without Retry-After!)'}`,
  )
  console.log(
    `flood times: median ${ms(quantile(times, 0.5) ?? 0)}, p95 ${ms(quantile(times, 0.95) ?? 0)}, slowest ${ms(slowest)}; all answered in ${ms(wallMs)}`,
  )
  console.log(`her login from her known address: ${hers.status} in ${ms(hers.ms)}`)
  console.log(`server RSS: ${idle.rssMb.toFixed(1)} MB before the flood, peak ${peakMb.toFixed(1)} MB`)
  const verdicts = [
    [
      `every flood request answered 401/429/503 within ${TARGETS.floodMs / 1000} s`,
      honest && slowest <= TARGETS.floodMs,
    ],
    [`her login 200 within ${TARGETS.herMs / 1000} s`, hers.status === 200 && hers.ms <= TARGETS.herMs],
    [`peak RSS under ${TARGETS.peakRssMb} MB`, peakMb < TARGETS.peakRssMb],
  ]
  for (const [target, met] of verdicts) console.log(`${met ? 'met ' : 'MISSED'}  ${target}`)
} finally {
  await stop()
}
