#!/usr/bin/env node
// Measures whether a login reveals that a username exists: starts the built server, sends failed
// logins for known users (wrong password: an argon2 user, and a bcrypt user as Node-RED's
// settings.js holds them) and for unknown users, interleaved, and prints the median time of each
// and how far each known user's is from the unknown users'. Not a test: the figures depend on the
// machine.
//
//   pnpm build && node scripts/login-timing.mjs [--attempts N] [--warmup N] [--no-bcrypt]
//
// --no-bcrypt leaves the bcrypt user out (argon2 users only).
// The throttle limits are raised in the server's settings so that no attempt is throttled.
import { createRequire } from 'node:module'
import { cpus } from 'node:os'
import { parseArgs } from 'node:util'
import { hashPassword } from '@flowadmin/server'
import { quantile, startBuiltServer } from '../bench/built-server.mjs'

const { values } = parseArgs({
  options: {
    attempts: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '20' },
    'no-bcrypt': { type: 'boolean', default: false },
  },
})
const withBcrypt = !values['no-bcrypt']
const attempts = Number(values.attempts)
const warmup = Number(values.warmup)
if (!Number.isInteger(attempts) || attempts < 1 || !Number.isInteger(warmup) || warmup < 0) {
  console.error('usage: node scripts/login-timing.mjs [--attempts N] [--warmup N] [--no-bcrypt]')
  process.exit(2)
}

/** bcryptjs as Node-RED's editor API loads it: what `node-red admin hash-pw` hashes with (cost 8). */
function nodeRedBcrypt() {
  const fromNodeRed = createRequire(createRequire(import.meta.url).resolve('node-red/package.json'))
  return createRequire(fromNodeRed.resolve('@node-red/editor-api/package.json'))('bcryptjs')
}

const users = [{ username: 'admin', password: await hashPassword('the-real-password'), permissions: '*' }]
if (withBcrypt) {
  users.push({
    username: 'editor',
    password: nodeRedBcrypt().hashSync('the-real-password', 8),
    permissions: '*',
  })
}
const known = users.map((user) => user.username)

const { url, stop } = await startBuiltServer('login-timing', {
  auditLog: 'off',
  adminAuth: {
    type: 'credentials',
    users,
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
    for (const username of known) await attempt(username)
    await attempt(`warmup-${i}`)
  }
  const times = new Map([...known, 'unknown'].map((name) => [name, []]))
  // Interleaved, in a rotating order, so that drift (other load, CPU frequency) touches all alike.
  for (let i = 0; i < attempts; i++) {
    const round = [...known, 'unknown']
    for (let j = 0; j < round.length; j++) {
      const name = round[(i + j) % round.length]
      times.get(name).push(await attempt(name === 'unknown' ? `nobody-${i}` : name))
    }
  }
  for (const sorted of times.values()) sorted.sort((a, b) => a - b)

  const ms = (value) => `${value.toFixed(2)} ms`.padStart(10)
  console.log(
    `login timing: ${attempts} failed logins each, interleaved, sequential, over one keep-alive connection`,
  )
  console.log(`node ${process.version}, ${cpus().length} CPUs (${cpus()[0]?.model ?? 'unknown'})`)
  console.log(`${''.padEnd(34)}${'median'.padStart(10)}${'p10'.padStart(10)}${'p90'.padStart(10)}`)
  const label = (name) =>
    name === 'unknown'
      ? 'unknown user'
      : `${name} (${name === 'admin' ? 'argon2' : 'bcrypt'}), wrong password`
  for (const [name, sorted] of times) {
    console.log(
      `${label(name).padEnd(34)}${ms(median(sorted))}${ms(quantile(sorted, 0.1))}${ms(quantile(sorted, 0.9))}`,
    )
  }
  const unknown = median(times.get('unknown'))
  for (const name of known) {
    const own = median(times.get(name))
    console.log(
      `unknown / ${name}: ${(unknown / own).toFixed(3)} (difference of medians ${(unknown - own).toFixed(2)} ms)`,
    )
  }
} finally {
  await stop()
}
