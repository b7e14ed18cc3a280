// `node bench/baseline-server.mjs hono|node-http ROUTES.json DB` (spawned by the bench): the floor
// flowadmin is measured against. It answers flowadmin's own GET /auth/login and GET /settings (the
// bodies and headers recorded from flowadmin in the same run) from memory, with a real bearer check
// for /settings: the token's SHA-256 looked up in SQLite (the built store's schema, opened with its
// durable settings), its expiry checked. `hono` is a bare Hono app on @hono/node-server (the same
// packages flowadmin serves with), `node-http` a raw node:http server. It prints
// `listening on URL token TOKEN`, the token being a live one in DB.
import { hash, randomBytes } from 'node:crypto'
import { readFileSync } from 'node:fs'
import http from 'node:http'
import { createRequire } from 'node:module'

const [kind, routesFile, dbPath] = process.argv.slice(2)
const root = new URL('../', import.meta.url)
const serverRequire = createRequire(new URL('packages/server/package.json', root))
const { openDatabase, createSqliteStores } = await import(
  new URL('packages/adapter-sqlite/dist/index.js', root).href
)

/** { path: { status, headers, body } } as flowadmin answered, for /auth/login and /settings. */
const routes = JSON.parse(readFileSync(routesFile, 'utf8'))
const db = openDatabase(dbPath)
const token = randomBytes(32).toString('base64url')
const sha256 = (text) => hash('sha256', text, 'hex')
// The live token is written by the store itself (its schema is the store's); lookups are raw.
await createSqliteStores(db).tokens.save({
  hash: sha256(token),
  id: randomBytes(12).toString('base64url'),
  kind: 'session',
  name: null,
  username: 'admin',
  clientId: 'service-admin',
  scope: ['*'],
  fingerprint: 'baseline',
  createdAt: Date.now(),
  expiresAt: Date.now() + 3_600_000,
  lastUsedAt: null,
  lastAddress: null,
  agent: null,
  audience: 'flowadmin',
  signIn: 'password',
})
const findToken = db.prepare('SELECT username, scope, expires_at FROM tokens WHERE hash = ?')
const UNAUTHORIZED = JSON.stringify({ code: 'unauthorized', message: 'Not authorised' })

/** The bearer check: true when the Authorization header holds a live token. */
function authorised(header) {
  if (typeof header !== 'string' || !header.startsWith('Bearer ')) return false
  const row = findToken.get(sha256(header.slice(7)))
  return row !== undefined && (row.expires_at === null || Number(row.expires_at) > Date.now())
}

const loginPage = routes['/auth/login']
const settings = routes['/settings']

function listening(server) {
  const { port } = server.address()
  console.log(`listening on http://127.0.0.1:${port} token ${token}`)
}

if (kind === 'hono') {
  const { Hono } = serverRequire('hono')
  const { serve } = serverRequire('@hono/node-server')
  const app = new Hono()
  app.get('/auth/login', (c) => c.body(loginPage.body, loginPage.status, loginPage.headers))
  app.get('/settings', (c) =>
    authorised(c.req.header('authorization'))
      ? c.body(settings.body, settings.status, settings.headers)
      : c.body(UNAUTHORIZED, 401, { 'content-type': 'application/json' }),
  )
  const server = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => listening(server))
} else if (kind === 'node-http') {
  const answer = (res, { status, headers, body }) => {
    res.writeHead(status, headers)
    res.end(body)
  }
  const server = http.createServer((req, res) => {
    const path = req.url.split('?')[0]
    if (req.method === 'GET' && path === '/auth/login') return answer(res, loginPage)
    if (req.method === 'GET' && path === '/settings') {
      return authorised(req.headers.authorization)
        ? answer(res, settings)
        : answer(res, { status: 401, headers: { 'content-type': 'application/json' }, body: UNAUTHORIZED })
    }
    answer(res, { status: 404, headers: { 'content-type': 'application/json' }, body: '{}' })
  })
  server.listen(0, '127.0.0.1', () => listening(server))
} else {
  console.error('usage: node bench/baseline-server.mjs hono|node-http ROUTES.json DB')
  process.exit(2)
}
process.on('SIGTERM', () => {
  db.close()
  process.exit(0)
})
