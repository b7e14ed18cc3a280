// The same admin on Node, for comparison: @hono/node-server, the stores over better-sqlite3,
// argon2 in WebAssembly. (flowadmin's own server, `flowadmin start`, uses the native argon2.)
//   FLOWADMIN_ADMIN_AUTH='{"users":[...]}' node node/server.js
import { createSqliteStores } from '@flowadmin/adapter-sqlite'
import { serve } from '@hono/node-server'
import { startAdmin } from '../start.js'

const { app, stores, stopSweeping } = await startAdmin({
  adminAuthText: process.env.FLOWADMIN_ADMIN_AUTH,
  file: process.env.FLOWADMIN_DB,
  openStores: createSqliteStores,
  exit: (code) => process.exit(code),
})

const hostname = process.env.HOST ?? '127.0.0.1'
const server = serve(
  {
    hostname,
    port: Number(process.env.PORT ?? 1880),
    fetch: (request, env) => app.fetch(request, { address: env.incoming.socket.remoteAddress }),
  },
  (info) => console.log(`flowadmin on Node ${process.version}: http://${hostname}:${info.port}`),
)

const stop = () => {
  stopSweeping()
  server.close(async () => {
    await stores.close()
    process.exit(0)
  })
  setTimeout(() => process.exit(0), 1_000).unref()
}
process.on('SIGINT', stop)
process.on('SIGTERM', stop)
