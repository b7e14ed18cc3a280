// One round of a scenario against one target: a freshly started server, logged in, settled,
// warmed up, measured and stopped; the start-up scenario's starts; a round with the CPU profiler.
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { RESOURCE_SERVER } from './flowadmin.mjs'
import { waitForIdle } from './load.mjs'
import { memory } from './proc.mjs'
import { selfTime } from './profile.mjs'
import { login } from './scenarios.mjs'

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * One more flowadmin round of `scenario` (`setup` as {@link measure} takes it) with the CPU
 * profiler on, writing into `cpuProfDir` (not counted in the figures); returns the profile's file
 * and its top frames.
 */
export async function profileRound(scenario, target, setup, { cpuProfDir, log }) {
  const before = new Set(readdirSync(cpuProfDir))
  await measure(scenario, target, { ...setup, profile: true })
  const written = readdirSync(cpuProfDir).filter((name) => !before.has(name) && name.endsWith('.cpuprofile'))
  if (written.length === 0) {
    log(`${scenario.id}: no CPU profile was written`)
    return null
  }
  // The scenario's server wrote the newest; `start` writes one per start.
  const file = join(cpuProfDir, written.sort().at(-1))
  const { totalMs, byFunction, byPlace } = selfTime(JSON.parse(readFileSync(file, 'utf8')))
  log(`${scenario.id}: CPU profile ${file}`)
  return { file, totalMs, byFunction: byFunction.slice(0, 15), byPlace: byPlace.slice(0, 10) }
}

/**
 * One scenario against one freshly started server: start, log in, settle, warm up, measure, stop.
 * `resourceServer` ({id, secret, hash}) is the bench's, when a scenario of the run needs one.
 */
export async function measure(
  scenario,
  target,
  { credentials, durationMs, warmupMs, resourceServer, profile = false },
) {
  if (scenario.startOnly) return measureStarts(scenario, target, { profile })
  const sessions = scenario.seed ? scenario.seed(target.name) : 0
  // The fleet's tokens are its resource server's (a token's audience), the others flowadmin's.
  const seed =
    sessions > 0 ? await target.seed(sessions, scenario.fleet ? RESOURCE_SERVER.id : undefined) : null
  // flowadmin's own loop only: Node-RED does not keep the recorder's signal handler.
  const preload = scenario.loopDelay && target.name === 'flowadmin' ? LOOP_DELAY : null
  const resourceServers =
    scenario.resourceServers && (target.name === 'flowadmin' || target.name === 'flowadmin-sqlite')
      ? [{ id: resourceServer.id, secret: resourceServer.hash }]
      : undefined
  const instance = await target.start({ seed, profile, preload, resourceServers })
  try {
    const rssStartMb = memory(instance.pid).rssMb
    const loginPage = await fetch(`${instance.url}/auth/login`, { signal: AbortSignal.timeout(15_000) })
    await loginPage.arrayBuffer()
    if (loginPage.status !== 200)
      throw new Error(`${target.name}: GET /auth/login answered ${loginPage.status}`)
    // A baseline has no logins: it comes with a live token of its own.
    const token = instance.token ?? (await login({ instance, target, credentials }))
    await sleep(250)
    const rssIdleMb = memory(instance.pid).rssMb
    // The pool is this target's seeded tokens; the fresh copy of the store makes them all live.
    const pool = scenario.pool
      ? { tokens: seed.tokens.slice(0, sessions - (scenario.sessions ?? 0)), next: 0 }
      : null
    const context = {
      instance,
      target,
      token,
      credentials,
      pool,
      seedTokens: seed?.tokens,
      profiling: profile,
    }
    if (preload) context.loopDelay = loopDelayProbe(instance)
    if (!scenario.noWarmup) await scenario.load({ ...context, durationMs: warmupMs, warmup: true })
    // Requests the warm-up left queued must not eat into the measured window.
    const drainMs = await waitForIdle(instance.pid)
    const result = await scenario.load({ ...context, durationMs })
    const { peakMb } = memory(instance.pid)
    // Resident memory once the load is over and the server idle again.
    await waitForIdle(instance.pid)
    await sleep(250)
    const rssEndMb = memory(instance.pid).rssMb
    return {
      ...result,
      rssEndMb,
      drainMs,
      rssStartMb,
      rssIdleMb,
      rssPeakMb: peakMb,
      spawnMs: instance.spawnMs,
      sessionsAtStart: sessions,
    }
  } catch (error) {
    const stderr = instance.output.stderr.trim()
    if (stderr) error.message += `\n${target.name} stderr: ${stderr.slice(-2000)}`
    throw error
  } finally {
    await instance.stop()
  }
}

/** The event loop delay recorder preloaded into a server (see loop-delay.cjs). */
const LOOP_DELAY = new URL('loop-delay.cjs', import.meta.url).pathname

/** Starts the server's loop delay recording over; `read()` ends it and returns its figures. */
function loopDelayProbe(instance) {
  const lines = () => instance.output.stderr.split('\n').filter((l) => l.startsWith('bench-loop-delay '))
  return {
    reset() {
      process.kill(instance.pid, 'SIGUSR2')
    },
    async read() {
      const before = lines().length
      process.kill(instance.pid, 'SIGUSR2')
      for (let waited = 0; lines().length === before && waited < 5000; waited += 10) await sleep(10)
      const line = lines()[before]
      return line ? JSON.parse(line.slice('bench-loop-delay '.length)) : null
    },
  }
}

/** Start to listening, `scenario.starts` times, each server stopped once it listens. */
async function measureStarts(scenario, target, { profile }) {
  const spawns = []
  const rss = []
  for (let i = 0; i < scenario.starts; i++) {
    const instance = await target.start({ profile: profile && i === 0 })
    try {
      spawns.push(instance.spawnMs)
      rss.push(memory(instance.pid).rssMb)
    } finally {
      await instance.stop()
    }
    if (profile) break
  }
  return { starts: spawns, rssAtListen: rss }
}
