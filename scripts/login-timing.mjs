#!/usr/bin/env node
// Measures whether a login reveals that a username exists: starts the built server, sends failed
// logins for a known user (wrong password) and for unknown users, interleaved, and prints the
// median time of each and the difference. Not a test: the figures depend on the machine.
//
//   pnpm build && node scripts/login-timing.mjs [--attempts N] [--warmup N]
//
// The throttle limits are raised in the server's settings so that no attempt is throttled.
import { cpus } from 'node:os'
import { parseArgs } from 'node:util'
import { hashPassword } from '@flowadmin/server'
import { quantile, startBuiltServer } from '../bench/built-server.mjs'

const { values } = parseArgs({
  options: { attempts: { type: 'string', default: '200' }, warmup: { type: 'string', default: '20' } },
})
const attempts = Number(values.attempts)
const warmup = Number(values.warmup)
if (!Number.isInteger(attempts) || attempts < 1 || !Number.isInteger(warmup) || warmup < 0) {
  console.error('usage: node scripts/login-timing.mjs [--attempts N] [--warmup N]')
  process.exit(2)
}

const { url, stop } = await startBuiltServer('login-timing', {
  auditLog: 'off',
  adminAuth: {
    type: 'credentials',
    users: [{ username: 'admin', password: await hashPassword('the-real-password'), permissions: '*' }],
    throttle: { maxFailuresPerUser: 1_000_000, maxFailuresPerAddress: 1_000_000 },
  },
})

/** One failed login; milliseconds from sending to the end of the response. */
async function attempt(username) {
  const started = performance.now()
  const res = await fetch(`${url}/auth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      client_id: 'service-admin',
      grant_type: 'password',
      scope: '*',
      username,
      password: 'a-wrong-password',
    }),
  })
  await res.arrayBuffer()
  const elapsed = performance.now() - started
  if (res.status !== 401) throw new Error(`expected 401 for ${username}, got ${res.status}`)
  return elapsed
}

const median = (sorted) =>
  sorted.length % 2 === 1
    ? sorted[(sorted.length - 1) / 2]
    : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2

try {
  for (let i = 0; i < warmup; i++) {
    await attempt('admin')
    await attempt(`warmup-${i}`)
  }
  const known = []
  const unknown = []
  // Interleaved, so that drift (other load, CPU frequency) touches both alike.
  for (let i = 0; i < attempts; i++) {
    if (i % 2 === 0) {
      known.push(await attempt('admin'))
      unknown.push(await attempt(`nobody-${i}`))
    } else {
      unknown.push(await attempt(`nobody-${i}`))
      known.push(await attempt('admin'))
    }
  }
  known.sort((a, b) => a - b)
  unknown.sort((a, b) => a - b)

  const ms = (value) => `${value.toFixed(2)} ms`.padStart(10)
  console.log(
    `login timing: ${attempts} failed logins each, interleaved, sequential, over one keep-alive connection`,
  )
  console.log(`node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'})`)
  console.log(`${''.padEnd(28)}${'median'.padStart(10)}${'p10'.padStart(10)}${'p90'.padStart(10)}`)
  for (const [label, sorted] of [
    ['known user, wrong password', known],
    ['unknown user', unknown],
  ]) {
    console.log(
      `${label.padEnd(28)}${ms(median(sorted))}${ms(quantile(sorted, 0.1))}${ms(quantile(sorted, 0.9))}`,
    )
  }
  const difference = median(unknown) - median(known)
  console.log(
    `difference of medians (unknown - known): ${difference.toFixed(2)} ms ` +
      `(${((difference / median(known)) * 100).toFixed(1)} % of the known user's median)`,
  )
} finally {
  await stop()
}
