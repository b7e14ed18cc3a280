// flowadmin on Bun: Bun.serve, the stores over bun:sqlite in one file, argon2 in WebAssembly.
//   FLOWADMIN_ADMIN_AUTH='{"users":[...]}' bun bun/server.js
import { createBunSqliteStores } from '@flowadmin/adapter-sqlite-builtin/bun'
import { startAdmin } from '../start.js'

const { app, stores, stopSweeping } = await startAdmin({
  adminAuthText: process.env.FLOWADMIN_ADMIN_AUTH,
  file: process.env.FLOWADMIN_DB,
  openStores: createBunSqliteStores,
  exit: (code) => process.exit(code),
})

const server = Bun.serve({
  hostname: process.env.HOST ?? '127.0.0.1',
  port: Number(process.env.PORT ?? 1880),
  fetch: (request, server) => app.fetch(request, { address: server.requestIP(request)?.address }),
})
console.log(`flowadmin on Bun ${Bun.version}: http://${server.hostname}:${server.port}`)

const stop = async () => {
  stopSweeping()
  await server.stop()
  await stores.close()
  process.exit(0)
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
