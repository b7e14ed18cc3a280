// flowadmin inside another program: the core over the memory store, with the program's own
// password check, node sets and flows, and the admin API served below /admin of its Hono app.
import { scryptSync, timingSafeEqual } from 'node:crypto'
import { createHttpApp } from '@flowadmin/adapter-http'
import { createMemoryStores } from '@flowadmin/adapter-memory'
import { createCore } from '@flowadmin/core'
import { serve } from '@hono/node-server'
import { getConnInfo } from '@hono/node-server/conninfo'
import { Hono } from 'hono'

// The program's own password hashes ("salt:scrypt hex"), checked in constant time.
const hash = (password, salt) => `${salt}:${scryptSync(password, salt, 32).toString('hex')}`
const verifier = {
  dummyHash: hash('a password no user has', 'dummy'),
  async verify(stored, password) {
    const expected = Buffer.from(stored)
    const actual = Buffer.from(hash(password, stored.split(':')[0]))
    return expected.length === actual.length && timingSafeEqual(expected, actual)
  },
}

const core = createCore(
  {
    stores: createMemoryStores(),
    verifier,
    loader: { load: async () => ({ ok: true }) }, // the program loads node sets itself
    typeUsage: { typesInUse: async () => new Set(['inject']) }, // what its running flows use
  },
  { adminAuth: { users: [{ username: 'admin', password: hash('s3cret', 'q7'), permissions: '*' }] } },
)
await core.modules.sync([
  {
    name: 'core-nodes',
    version: '1.0.0',
    sets: [
      { name: 'inject', types: ['inject'] },
      { name: 'debug', types: ['debug'] },
    ],
  },
])

const admin = createHttpApp(core, {
  version: '1.0.0',
  basePath: '/admin',
  clientAddress: (c) => getConnInfo(c).remote.address ?? 'unknown',
})
const app = new Hono()
app.get('/', (c) => c.text('my flow runtime'))
app.all('/admin/*', (c) => admin.fetch(c.req.raw, c.env))

serve({ fetch: app.fetch, hostname: '127.0.0.1', port: Number(process.env.PORT ?? 3000) }, (info) => {
  console.log(`admin API on http://127.0.0.1:${info.port}/admin`)
})
