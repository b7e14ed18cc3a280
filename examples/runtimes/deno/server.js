// flowadmin on Deno: Deno.serve, the stores over node:sqlite in one file, argon2 in WebAssembly.
//   FLOWADMIN_ADMIN_AUTH='{"users":[...]}' deno run --allow-net --allow-env --allow-read --allow-write --allow-sys=uid,gid deno/server.js
import { createNodeSqliteStores } from '@flowadmin/adapter-sqlite-builtin/node-sqlite'
import { startAdmin } from '../start.js'

const { app, stores, stopSweeping } = await startAdmin({
  adminAuthText: Deno.env.get('FLOWADMIN_ADMIN_AUTH'),
  file: Deno.env.get('FLOWADMIN_DB'),
  openStores: createNodeSqliteStores,
  exit: (code) => Deno.exit(code),
})

const server = Deno.serve(
  {
    hostname: Deno.env.get('HOST') ?? '127.0.0.1',
    port: Number(Deno.env.get('PORT') ?? 1880),
    onListen: ({ hostname, port }) =>
      console.log(`flowadmin on Deno ${Deno.version.deno}: http://${hostname}:${port}`),
  },
  (request, info) => app.fetch(request, { address: info.remoteAddr.hostname }),
)

const stop = async () => {
  stopSweeping()
  await server.shutdown()
  await stores.close()
  Deno.exit(0)
}
Deno.addSignalListener('SIGINT', stop)
Deno.addSignalListener('SIGTERM', stop)
