// Bundles worker.js and the built packages it imports into dist/worker.js, and puts argon2.wasm
// beside it, for config.capnp. workerd reads modules from the config, not from node_modules.
import { mkdir, writeFile } from 'node:fs/promises'
import { loadArgon2Wasm } from '@flowadmin/verifier-wasm/load'
import { build } from 'esbuild'

const dist = new URL('./dist/', import.meta.url)
await mkdir(dist, { recursive: true })
await build({
  entryPoints: [new URL('./worker.js', import.meta.url).pathname],
  outfile: new URL('./worker.js', dist).pathname,
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  external: ['./argon2.wasm'],
  logLevel: 'warning',
})
await writeFile(new URL('./argon2.wasm', dist), await loadArgon2Wasm())
