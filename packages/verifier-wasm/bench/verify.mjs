// `node bench/verify.mjs [count=20]` (also `bun bench/verify.mjs`, `deno run -A bench/verify.mjs`),
// after `pnpm build`: times argon2id verifications of a hash at flowadmin's cost, one at a time,
// in WebAssembly and, where the native package loads, natively. Prints the median and p90.
import { ARGON2ID_COST, createWasmVerifier } from '../dist/index.js'
import { loadArgon2Wasm } from '../dist/load.js'

const count = Number(globalThis.process?.argv[2] ?? 20)
const runtime = globalThis.Bun
  ? `Bun ${Bun.version}`
  : globalThis.Deno
    ? `Deno ${Deno.version.deno}`
    : `Node ${process.version}`

async function time(name, verify) {
  await verify() // warm-up
  const times = []
  for (let i = 0; i < count; i++) {
    const start = performance.now()
    if (!(await verify())) throw new Error(`${name}: the password did not verify`)
    times.push(performance.now() - start)
  }
  times.sort((a, b) => a - b)
  const at = (q) => times[Math.min(times.length - 1, Math.floor(q * times.length))].toFixed(1)
  console.log(`${runtime}, ${name}: median ${at(0.5)} ms, p90 ${at(0.9)} ms (${count} verifications)`)
}

const wasm = await createWasmVerifier(await loadArgon2Wasm())
const hash = wasm.hash('bench password')
let native = null
try {
  native = await import('argon2')
} catch {
  // Not loadable in this runtime: WebAssembly only.
}
if (native) {
  const nativeHash = await native.hash('bench password', { type: native.argon2id, ...ARGON2ID_COST })
  await time('native argon2', () => native.verify(nativeHash, 'bench password'))
}
await time('WebAssembly', () => wasm.verify(hash, 'bench password'))
