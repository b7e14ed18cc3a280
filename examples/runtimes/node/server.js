// The same admin on Node, for comparison: @hono/node-server, the stores over better-sqlite3,
// argon2 in WebAssembly. (flowadmin's own server, `flowadmin start`, uses the native argon2.)
//   FLOWADMIN_ADMIN_AUTH='{"users":[...]}' node node/server.js
import { createSqliteStores } from '@flowadmin/adapter-sqlite'
import { createWasmVerifier } from '@flowadmin/verifier-wasm'
import { loadArgon2Wasm } from '@flowadmin/verifier-wasm/load'
import { serve } from '@hono/node-server'
import { createAdmin, readAdminAuth, SWEEP_INTERVAL_MS } from '../admin.js'

let stores
let app
let core
try {
  const adminAuth = readAdminAuth(process.env.FLOWADMIN_ADMIN_AUTH)
  stores = createSqliteStores(process.env.FLOWADMIN_DB ?? 'flowadmin.db')
  ;({ app, core } = await createAdmin({
    stores,
    verifier: await createWasmVerifier(await loadArgon2Wasm()),
    adminAuth,
  }))
} catch (error) {
  console.error(`flowadmin cannot start: ${error.message}`)
  process.exit(1)
}

const hostname = process.env.HOST ?? '127.0.0.1'
const server = serve(
  {
    hostname,
    port: Number(process.env.PORT ?? 1880),
    fetch: (request, env) => app.fetch(request, { address: env.incoming.socket.remoteAddress }),
  },
  (info) => console.log(`flowadmin on Node ${process.version}: http://${hostname}:${info.port}`),
)
const sweeper = setInterval(() => core.sweep().catch((error) => console.error(error)), SWEEP_INTERVAL_MS)

const stop = () => {
  clearInterval(sweeper)
  server.close(async () => {
    await stores.close()
    process.exit(0)
  })
  setTimeout(() => process.exit(0), 1_000).unref()
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
