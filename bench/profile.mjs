// `node bench/profile.mjs FILE.cpuprofile [N]`: the functions with the most self time in a V8 CPU
// profile (as written by `pnpm bench --cpu-prof DIR`), and the same grouped by package or file.
import { readFileSync } from 'node:fs'

const [file, topArg] = process.argv.slice(2)
if (!file) {
  console.error('usage: node bench/profile.mjs FILE.cpuprofile [N]')
  process.exit(2)
}
const top = Number(topArg ?? 25)
const profile = JSON.parse(readFileSync(file, 'utf8'))
const byId = new Map(profile.nodes.map((node) => [node.id, node]))
const selfUs = new Map()
// Each sample is charged its time delta to the node it landed in.
profile.samples.forEach((id, i) => {
  selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0))
})
const total = [...selfUs.values()].reduce((a, b) => a + b, 0)

const place = (frame) => {
  const url = frame.url.replace(/^file:\/\//, '')
  const pkg = url.match(/node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?((?:@[^/]+\/)?[^/]+)/)?.[1]
  const own = url.match(/packages\/([^/]+)\/dist\/(.+)$/)
  if (own) return `@flowadmin/${own[1]} ${own[2]}`
  if (pkg) return pkg
  if (url.startsWith('node:')) return url
  return url === '' ? `(${frame.functionName || 'native'})` : url
}

const byFunction = new Map()
const byPlace = new Map()
for (const [id, us] of selfUs) {
  const frame = byId.get(id).callFrame
  const where = place(frame)
  const key = `${frame.functionName || '(anonymous)'}  ${where}:${frame.lineNumber + 1}`
  byFunction.set(key, (byFunction.get(key) ?? 0) + us)
  byPlace.set(where, (byPlace.get(where) ?? 0) + us)
}
const print = (title, map) => {
  console.log(`\n${title} (of ${(total / 1000).toFixed(0)} ms sampled)`)
  for (const [key, us] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top)) {
    console.log(
      `${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(1).padStart(8)} ms  ${key}`,
    )
  }
}
print('Self time by function', byFunction)
print('Self time by package or file', byPlace)
