// `node bench/profile.mjs FILE.cpuprofile [N]`: the functions with the most self time in a V8 CPU
// profile (as written by `pnpm bench --cpu-prof DIR`), and the same grouped by package or file.
// Imported, `selfTime(profile)` gives the same tables as data (the bench puts them in its report).
import { readFileSync } from 'node:fs'
import { pathToFileURL } from 'node:url'

const place = (frame) => {
  const url = frame.url.replace(/^file:\/\//, '')
  const pkg = url.match(/node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/)?.[1]
  const own = url.match(/packages\/([^/]+)\/dist\/(.+)$/)
  if (own) return `@flowadmin/${own[1]} ${own[2]}`
  if (pkg) return pkg
  if (url.startsWith('node:')) return url
  return url === '' ? `(${frame.functionName || 'native'})` : url
}

/**
 * Self time by function and by package or file, largest first, each `{ name, ms, share }` (share
 * of the sampled time), and the sampled total in ms. `(idle)` is the process waiting for work.
 */
export function selfTime(profile) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]))
  const selfUs = new Map()
  // Each sample is charged its time delta to the node it landed in.
  profile.samples.forEach((id, i) => {
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
  })
  const total = [...selfUs.values()].reduce((a, b) => a + b, 0)
  const byFunction = new Map()
  const byPlace = new Map()
  for (const [id, us] of selfUs) {
    const frame = byId.get(id).callFrame
    const where = place(frame)
    const key = `${frame.functionName || '(anonymous)'}  ${where}:${frame.lineNumber + 1}`
    byFunction.set(key, (byFunction.get(key) ?? 0) + us)
    byPlace.set(where, (byPlace.get(where) ?? 0) + us)
  }
  const sorted = (map) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .map(([name, us]) => ({ name, ms: us / 1000, share: total > 0 ? us / total : 0 }))
  return { totalMs: total / 1000, byFunction: sorted(byFunction), byPlace: sorted(byPlace) }
}

/**
 * The profile with only the samples taken from `fromUs` to `toUs` (microseconds on the monotonic
 * clock, as `process.hrtime` reads it: V8 stamps its samples on the same clock) charged any time.
 */
export function within(profile, fromUs, toUs) {
  let at = profile.startTime
  const timeDeltas = profile.timeDeltas.map((delta) => {
    at += delta
    return at >= fromUs && at <= toUs ? delta : 0
  })
  return { ...profile, timeDeltas }
}

function main() {
  const [file, topArg] = process.argv.slice(2)
  if (!file) {
    console.error('usage: node bench/profile.mjs FILE.cpuprofile [N]')
    process.exit(2)
  }
  const top = Number(topArg ?? 25)
  const { totalMs, byFunction, byPlace } = selfTime(JSON.parse(readFileSync(file, 'utf8')))
  const print = (title, rows) => {
    console.log(`\n${title} (of ${totalMs.toFixed(0)} ms sampled)`)
    for (const { name, ms, share } of rows.slice(0, top)) {
      console.log(`${(100 * share).toFixed(1).padStart(5)}%  ${ms.toFixed(1).padStart(8)} ms  ${name}`)
    }
  }
  print('Self time by function', byFunction)
  print('Self time by package or file', byPlace)
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main()
