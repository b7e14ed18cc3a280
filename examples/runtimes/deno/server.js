// flowadmin on Deno: Deno.serve, the stores over node:sqlite in one file, argon2 in WebAssembly.
//   FLOWADMIN_ADMIN_AUTH='{"users":[...]}' deno run --allow-net --allow-env --allow-read --allow-write --allow-sys=uid,gid deno/server.js
import { createNodeSqliteStores } from '@flowadmin/adapter-sqlite-builtin/node-sqlite'
import { createWasmVerifier } from '@flowadmin/verifier-wasm'
import { loadArgon2Wasm } from '@flowadmin/verifier-wasm/load'
import { createAdmin, readAdminAuth, SWEEP_INTERVAL_MS } from '../admin.js'

let stores
let app
let core
try {
  const adminAuth = readAdminAuth(Deno.env.get('FLOWADMIN_ADMIN_AUTH'))
  stores = createNodeSqliteStores(Deno.env.get('FLOWADMIN_DB') ?? 'flowadmin.db')
  ;({ app, core } = await createAdmin({
    stores,
    verifier: await createWasmVerifier(await loadArgon2Wasm()),
    adminAuth,
  }))
} catch (error) {
  console.error(`flowadmin cannot start: ${error.message}`)
  Deno.exit(1)
}

const server = Deno.serve(
  {
    hostname: Deno.env.get('HOST') ?? '127.0.0.1',
    port: Number(Deno.env.get('PORT') ?? 1880),
    onListen: ({ hostname, port }) =>
      console.log(`flowadmin on Deno ${Deno.version.deno}: http://${hostname}:${port}`),
  },
  (request, info) => app.fetch(request, { address: info.remoteAddr.hostname }),
)
const sweeper = setInterval(() => core.sweep().catch((error) => console.error(error)), SWEEP_INTERVAL_MS)

const stop = async () => {
  clearInterval(sweeper)
  await server.shutdown()
  await stores.close()
  Deno.exit(0)
}
Deno.addSignalListener('SIGINT', stop)
Deno.addSignalListener('SIGTERM', stop)
