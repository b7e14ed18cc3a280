// `pnpm bench --storage postgres`: flowadmin on PostgreSQL. Every start gets a database of its
// own (a copy of a seeded template when the scenario needs live tokens), dropped when it stops;
// the two-instance scenarios start a second instance on the first one's database.
import { randomBytes } from 'node:crypto'
import { runPropagation } from './fleet.mjs'
import { createSeedingCore } from './flowadmin.mjs'
import { runWorkers } from './load.mjs'

export const DEFAULT_PG = 'postgres://postgres@127.0.0.1:5432/postgres'

/** Databases of one bench run on the server at `serverUrl` (its maintenance database). */
export async function createPostgresStorage({ serverUrl, root }) {
  const { default: pg } = await import(
    new URL('packages/adapter-postgres/node_modules/pg/lib/index.js', root).href
  )
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  const created = new Set()
  const urlOf = (name) => {
    const url = new URL(serverUrl)
    url.pathname = `/${name}`
    return url.toString()
  }
  const drop = async (name) => {
    created.delete(name)
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
  }
  return {
    /** A new database, empty or a copy of `template`; returns its name and URL. */
    async create(template) {
      const name = `flowadmin_bench_${randomBytes(6).toString('hex')}`
      await admin.query(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template}` : ''}`)
      created.add(name)
      return { name, url: urlOf(name) }
    },
    drop,
    /** Drops every database this run created and disconnects. */
    async close() {
      for (const name of [...created]) await drop(name)
      await admin.end()
    },
  }
}

/**
 * A database holding `count` live tokens of `username`, issued through the built core and
 * PostgreSQL stores (the same hashing and records as a real login). Returns its name and the tokens.
 */
export async function seedPostgresTokens(storage, { count, username, passwordHash, root, audience }) {
  const { createPostgresStores } = await import(new URL('packages/adapter-postgres/dist/index.js', root).href)
  const database = await storage.create()
  const stores = await createPostgresStores({ url: database.url, pool: 8 })
  try {
    const issue = await createSeedingCore(stores, { username, passwordHash, root, audience })
    const tokens = []
    // Eight at a time, one per connection of the pool.
    for (let done = 0; done < count; done += 8) {
      tokens.push(...(await Promise.all(Array.from({ length: Math.min(8, count - done) }, issue))))
    }
    return { name: database.name, tokens }
  } finally {
    // A template must have no connection open when it is copied.
    await stores.close()
  }
}

const FORM = 'application/x-www-form-urlencoded'

/**
 * The scenarios of two instances on one database, whose requests alternate between them: a
 * worker's requests go to one instance, then the other. Server CPU is both processes' together.
 */
export function createTwoInstanceScenarios({ modules, fleet, fleetLoad, pools }) {
  // The second instance starts with the warm-up and stops with the first.
  const withPeer = (load) => async (context) => {
    const peer = await context.target.startPeer(context.instance)
    return load({ ...context, peer })
  }
  const login = withPeer(({ instance, peer, target, credentials, durationMs }) => {
    const body = new URLSearchParams({
      client_id: target.clientId,
      grant_type: 'password',
      scope: '*',
      username: credentials.username,
      password: credentials.password,
    }).toString()
    const servers = [instance, peer]
    return runWorkers({
      pids: [instance.pid, peer.pid],
      connections: 4,
      durationMs,
      request: (worker, n) => ({
        url: `${servers[(worker + n) % 2].url}/auth/token`,
        init: { method: 'POST', headers: { 'content-type': FORM }, body },
      }),
    })
  })
  // Each worker owns a module and disables it on one instance, enables it on the other, and so
  // on: every request is a real change, written by one instance and announced to the other
  // (which loads the node sets of an enable).
  const toggle = withPeer(({ instance, peer, token, durationMs }) => {
    const servers = [instance, peer]
    return runWorkers({
      pids: [instance.pid, peer.pid],
      connections: 10,
      durationMs,
      request: (worker, n) => ({
        url: `${servers[n % 2].url}/nodes/${modules[worker % modules.length]}`,
        init: {
          method: 'PUT',
          headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ enabled: n % 2 === 1 }),
        },
      }),
    })
  })
  // The same second instance for the warm-up and the measured window: it holds what it read.
  const withOnePeer = (load) => async (context) => {
    context.instance.peer ??= await context.target.startPeer(context.instance)
    return load({ ...context, peer: context.instance.peer })
  }
  const propagation = withOnePeer(({ instance, peer, pool, durationMs }) =>
    runPropagation({ a: instance, b: peer, pool, durationMs }),
  )
  return [
    {
      id: 'fleet-2i',
      title: `The fleet of \`fleet\` (${fleet.clients} resource servers, ${fleet.rate}/s in all) split between two instances on one database`,
      load: withOnePeer(fleetLoad(fleet)),
      peers: true,
      resourceServers: true,
      seed: () => fleet.clients,
      fleet: true,
    },
    {
      id: 'propagation',
      title:
        'A revocation at one instance, refused at the other: from the revoke answered to the first 401 there (asked again and again), one token at a time',
      load: propagation,
      peers: true,
      // Each sample takes a few round trips: a few thousand tokens outlast the window.
      seed: (target) => Math.min(pools[target], 3000),
      pool: true,
      propagation: true,
    },
    {
      id: 'login-2i',
      title: 'POST /auth/token (logins) alternating between two instances on one database, 4 connections',
      load: login,
      peers: true,
    },
    {
      id: 'toggle-2i',
      title:
        'PUT /nodes/:module alternating between two instances (disable on one, enable on the other), 10 connections',
      load: toggle,
      peers: true,
    },
  ]
}
