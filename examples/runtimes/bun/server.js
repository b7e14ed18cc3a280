// flowadmin on Bun: Bun.serve, the stores over bun:sqlite in one file, argon2 in WebAssembly.
//   FLOWADMIN_ADMIN_AUTH='{"users":[...]}' bun bun/server.js
import { createBunSqliteStores } from '@flowadmin/adapter-sqlite-builtin/bun'
import { createWasmVerifier } from '@flowadmin/verifier-wasm'
import { loadArgon2Wasm } from '@flowadmin/verifier-wasm/load'
import { createAdmin, readAdminAuth, SWEEP_INTERVAL_MS } from '../admin.js'

let stores
let app
let core
try {
  const adminAuth = readAdminAuth(process.env.FLOWADMIN_ADMIN_AUTH)
  stores = createBunSqliteStores(process.env.FLOWADMIN_DB ?? 'flowadmin.db')
  ;({ app, core } = await createAdmin({
    stores,
    verifier: await createWasmVerifier(await loadArgon2Wasm()),
    adminAuth,
  }))
} catch (error) {
  console.error(`flowadmin cannot start: ${error.message}`)
  process.exit(1)
}

const server = Bun.serve({
  hostname: process.env.HOST ?? '127.0.0.1',
  port: Number(process.env.PORT ?? 1880),
  fetch: (request, server) => app.fetch(request, { address: server.requestIP(request)?.address }),
})
const sweeper = setInterval(() => core.sweep().catch((error) => console.error(error)), SWEEP_INTERVAL_MS)
console.log(`flowadmin on Bun ${Bun.version}: http://${server.hostname}:${server.port}`)

const stop = async () => {
  clearInterval(sweeper)
  await server.stop()
  await stores.close()
  process.exit(0)
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
