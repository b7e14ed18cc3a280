// A built instance while PostgreSQL goes away: bounded 503s, no crash, recovery by itself.
import { connect, createServer, type Server, type Socket } from 'node:net'
import { SCHEMA_VERSION } from '@flowadmin/adapter-postgres'
import { afterEach, describe, expect, it } from 'vitest'
import { freePort } from '../../adapter-postgres/test/pg-server.js'
import { startTcpProxy, type TcpProxy } from '../../adapter-postgres/test/tcp-proxy.js'
import { logEntries, runCli, startBuiltServer, writeSettings } from './cli-process.js'
import { logInAs } from './password-grant.js'
import {
  bearer,
  flags,
  login,
  moduleOn,
  prepareInstance,
  prepareWithLeaver,
  setEnabled,
  TEXT_TOOLS,
  tokenFrom,
  useInstancesOnOneDatabase,
} from './postgres-instances.js'

const database = useInstancesOnOneDatabase()

/** Asks until the answer is 200; returns how long that took. Every answer before must be a 503. */
async function untilOk(request: () => Promise<Response>, limitMs: number): Promise<number> {
  const started = Date.now()
  for (;;) {
    const response = await request()
    if (response.status === 200) return Date.now() - started
    expect(response.status).toBe(503)
    await response.arrayBuffer()
    if (Date.now() - started > limitMs) throw new Error(`still 503 after ${limitMs} ms`)
  }
}

describe('PostgreSQL going away under a running instance', () => {
  let proxy: TcpProxy
  afterEach(() => proxy?.close())

  const behindProxy = async () => {
    const url = new URL(database.current().url)
    proxy = await startTcpProxy(url.hostname, Number(url.port || 5432))
    url.host = `127.0.0.1:${proxy.port}`
    return url.toString()
  }

  it('answers 503 storage_unavailable with Retry-After within the timeout while the server stops answering, then recovers by itself', async () => {
    const instance = await startBuiltServer(
      await prepareInstance({ url: await behindProxy(), timeoutMs: 1000 }),
    )
    const token = await tokenFrom(instance.url)
    expect((await setEnabled(instance.url, TEXT_TOOLS, false, token)).status).toBe(200)

    proxy.pause()
    const started = Date.now()
    // A request whose answer is read from the store (the token check alone may be answered from
    // memory: nothing can be revoked while the server does not answer).
    const response = await fetch(`${instance.url}/auth/tokens`, { headers: bearer(token) })
    const firstOutage = Date.now() - started
    expect(response.status).toBe(503)
    expect(Number(response.headers.get('retry-after'))).toBeGreaterThan(0)
    expect(await response.json()).toEqual({ code: 'storage_unavailable', message: expect.any(String) })
    expect(firstOutage).toBeLessThan(5000)
    // A write while it cannot commit is not acknowledged.
    expect((await setEnabled(instance.url, TEXT_TOOLS, true, token)).status).toBe(503)

    proxy.resume()
    const recovery = await untilOk(
      () => fetch(`${instance.url}/settings`, { headers: bearer(token) }),
      10_000,
    )
    console.info(
      `server not answering: first 503 after ${firstOutage} ms; 200 again ${recovery} ms after it answered`,
    )
    const module = await moduleOn(instance.url, TEXT_TOOLS, token)
    expect(module.nodes.every((set) => set.enabled === module.nodes[0]?.enabled)).toBe(true)
    expect(instance.run.child.exitCode).toBeNull()
    expect(instance.run.stderr).toContain('the store cannot be reached, requests answer 503')
    expect(instance.run.stderr).not.toContain(' at ') // no stack trace
  })

  it('rides out its connections being terminated: 200 or 503, never 500, and nothing acknowledged lost', async () => {
    const instance = await startBuiltServer(
      await prepareInstance({ url: database.current().url, timeoutMs: 1000 }),
    )
    const token = await tokenFrom(instance.url)
    expect((await setEnabled(instance.url, TEXT_TOOLS, false, token)).status).toBe(200)

    const terminated = Date.now()
    await database
      .current()
      .admin(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [database.current().name],
      )
    const recovery = await untilOk(
      () => fetch(`${instance.url}/settings`, { headers: bearer(token) }),
      10_000,
    )
    console.info(
      `backends terminated: 200 again after ${Date.now() - terminated} ms (${recovery} ms of asking)`,
    )
    expect(flags(await moduleOn(instance.url, TEXT_TOOLS, token))).toEqual([
      `${TEXT_TOOLS}/upper enabled=false loaded=true`,
      `${TEXT_TOOLS}/lower enabled=false loaded=true`,
    ])
    expect((await setEnabled(instance.url, TEXT_TOOLS, true, token)).status).toBe(200)
    expect(instance.run.child.exitCode).toBeNull()
  })
})

/**
 * A relay to PostgreSQL on a port of its own that can refuse connections, as a server that is
 * down does (`refuse()`: its connections reset, its port closed), and accept them again.
 */
async function startRefusingRelay(targetHost: string, targetPort: number) {
  const sockets = new Set<Socket>()
  let listener: Server | null = null
  let port = 0
  const track = (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
    socket.on('error', () => {})
  }
  const accept = () =>
    new Promise<void>((resolve, reject) => {
      const server = createServer((client) => {
        const upstream = connect(targetPort, targetHost)
        track(client)
        track(upstream)
        client.pipe(upstream).pipe(client)
        client.on('close', () => upstream.destroy())
        upstream.on('close', () => client.destroy())
      })
      server.once('error', reject)
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as { port: number }).port
        listener = server
        resolve()
      })
    })
  const refuse = async () => {
    const server = listener
    listener = null
    for (const socket of sockets) socket.resetAndDestroy()
    sockets.clear()
    if (server !== null) await new Promise<void>((resolve) => server.close(() => resolve()))
  }
  await accept()
  return { port, accept, refuse }
}

/** Waits until `condition` holds, asking every 50 ms; throws `what` after `limitMs`. */
async function until(condition: () => boolean | Promise<boolean>, what: string, limitMs = 15_000) {
  const deadline = Date.now() + limitMs
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

describe('reloading the settings (SIGHUP) while PostgreSQL refuses connections', () => {
  let relay: Awaited<ReturnType<typeof startRefusingRelay>> | null = null
  afterEach(() => relay?.refuse())

  it('keeps running with the users of before and says why in one line; the next SIGHUP after the outage applies', async () => {
    const target = new URL(database.current().url)
    relay = await startRefusingRelay(target.hostname, Number(target.port || 5432))
    const url = new URL(target)
    url.host = `127.0.0.1:${relay.port}`
    // A second user, who leaves in the reload.
    const { file: settingsFile, settings } = await prepareWithLeaver({ url: url.toString(), timeoutMs: 1000 })
    const [admin] = settings.adminAuth.users
    const instance = await startBuiltServer(settingsFile)
    const adminToken = await tokenFrom(instance.url)
    const loggedIn = await logInAs(instance.url, 'leaver', 'leaver-pw')
    expect(loggedIn.status).toBe(200)
    const leaverToken = ((await loggedIn.json()) as { access_token: string }).access_token
    const settingsAs = (token: string) => fetch(`${instance.url}/settings`, { headers: bearer(token) })
    expect((await settingsAs(leaverToken)).status).toBe(200)

    settings.adminAuth.users = [admin]
    await writeSettings(settingsFile, settings)
    await relay.refuse()
    const refusals = () => logEntries(instance.run.stderr).filter((entry) => entry.level === 'error')
    instance.run.child.kill('SIGHUP')
    await until(
      () => instance.run.stderr.includes('not reloaded') || instance.run.child.exitCode !== null,
      'the reload is refused',
    )
    expect(instance.run.child.exitCode).toBeNull()
    expect(refusals()).toEqual([
      {
        level: 'error',
        time: expect.any(String),
        reason: `the tokens of removed users could not be deleted: PostgreSQL cannot be reached: connect ECONNREFUSED 127.0.0.1:${relay.port}`,
        msg: 'settings not reloaded, the running settings stay',
      },
    ])
    expect(instance.run.stderr).not.toContain(' at ') // no stack trace

    // PostgreSQL back: the users of before are still in effect, the leaver's token included.
    await relay.accept()
    await until(async () => (await settingsAs(adminToken)).status === 200, 'the store answers again')
    expect((await settingsAs(leaverToken)).status).toBe(200)
    const leaversTokens = async () =>
      Number(
        (
          await database
            .current()
            .query("SELECT count(*) AS n FROM flowadmin_tokens WHERE username = 'leaver'")
        ).rows[0].n,
      )
    expect(await leaversTokens()).toBe(1)

    instance.run.child.kill('SIGHUP')
    await until(
      () => logEntries(instance.run.stderr).some((entry) => entry.msg === 'settings reloaded'),
      'the second reload applies',
    )
    expect(await leaversTokens()).toBe(0)
    expect((await settingsAs(leaverToken)).status).toBe(401)
    expect((await settingsAs(adminToken)).status).toBe(200)
    expect(refusals()).toHaveLength(1)
    expect(instance.run.child.exitCode).toBeNull()
  })
})

describe('PostgreSQL restarted under load, two instances on it', () => {
  let relay: Awaited<ReturnType<typeof startRefusingRelay>> | null = null
  afterEach(() => relay?.refuse())

  it('loses no acknowledged login or revocation, answers only 200, 401 or 503 meanwhile, and serves again at both', async () => {
    const target = new URL(database.current().url)
    relay = await startRefusingRelay(target.hostname, Number(target.port || 5432))
    const url = new URL(target)
    url.host = `127.0.0.1:${relay.port}`
    const postgres = { url: url.toString(), timeoutMs: 1000, pool: 4 }
    const instances = [
      await startBuiltServer(await prepareInstance(postgres)),
      await startBuiltServer(await prepareInstance(postgres)),
    ]
    const urls = instances.map((instance) => instance.url)
    const issued: string[] = []
    const revoked: string[] = []
    /** Tokens a revocation was asked for, answered or not: they may be gone. */
    const attempted = new Set<string>()
    const statuses = new Map<number, number>()
    const count = (status: number) => statuses.set(status, (statuses.get(status) ?? 0) + 1)
    let running = true
    const worker = async (w: number) => {
      for (let n = 0; running; n++) {
        const at = urls[(w + n) % 2] as string
        const step = n % 3
        if (step === 0) {
          const response = await login(at)
          count(response.status)
          if (response.status === 200)
            issued.push(((await response.json()) as { access_token: string }).access_token)
          else await response.arrayBuffer()
        } else if (step === 1 && issued.length > 4) {
          const token = issued[Math.floor(Math.random() * issued.length)] as string
          if (attempted.has(token)) continue
          attempted.add(token)
          const response = await fetch(`${at}/auth/revoke`, {
            method: 'POST',
            headers: bearer(token),
            body: new URLSearchParams({ token }),
          })
          count(response.status)
          await response.arrayBuffer()
          if (response.status === 200) revoked.push(token)
        } else if (issued.length > 0) {
          const token = issued[issued.length - 1] as string
          const response = await fetch(`${at}/settings`, { headers: bearer(token) })
          count(response.status)
          await response.arrayBuffer()
        }
      }
    }
    const load = Promise.all([0, 1, 2, 3].map(worker))
    await until(() => issued.length >= 6 && revoked.length >= 2, 'the load issues and revokes')
    const before = { issued: issued.length, revoked: revoked.length }
    // The server goes down (every connection reset, none accepted), and comes back.
    await relay.refuse()
    await new Promise((resolve) => setTimeout(resolve, 1500))
    await relay.accept()
    await until(
      () => issued.length >= before.issued + 4 && revoked.length >= before.revoked + 2,
      'both instances issue and revoke again',
      30_000,
    )
    running = false
    await load

    expect([...statuses.keys()].filter((status) => ![200, 401, 503].includes(status))).toEqual([])
    expect(statuses.get(503) ?? 0).toBeGreaterThan(0)
    // Every acknowledged write is there, at both instances.
    for (const instance of urls) {
      for (const token of issued.filter((token) => !attempted.has(token))) {
        const response = await fetch(`${instance}/settings`, { headers: bearer(token) })
        expect(response.status).toBe(200)
        await response.arrayBuffer()
      }
      for (const token of revoked) {
        const response = await fetch(`${instance}/settings`, { headers: bearer(token) })
        expect(response.status).toBe(401)
        await response.arrayBuffer()
      }
    }
    const stored = Number(
      (await database.current().query('SELECT count(*) AS n FROM flowadmin_tokens')).rows[0].n,
    )
    expect(stored).toBeGreaterThanOrEqual(issued.length - attempted.size)
    for (const instance of instances) expect(instance.run.child.exitCode).toBeNull()
  })
})

describe('starting without a reachable PostgreSQL', () => {
  it('exits non-zero with one line naming host and port, one saying where the address comes from, and no password', async () => {
    const port = await freePort()
    const settings = await prepareInstance({ url: `postgres://admin:hunter2@127.0.0.1:${port}/flows` })
    const run = runCli(['start', '--settings', settings, '--port', '0'])
    expect(await run.exited).toBe(1)
    expect(run.stderr).toBe(
      `flowadmin: cannot reach PostgreSQL at 127.0.0.1:${port}/flows: connect ECONNREFUSED 127.0.0.1:${port}\n` +
        `flowadmin: is PostgreSQL running at 127.0.0.1:${port}? its address comes from "postgres.url" in the settings, else the DATABASE_URL variable, else the PG* variables (PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD)\n`,
    )
    expect(run.stdout).toBe('')
  })
})

describe('flowadmin migrate', () => {
  it('applies the schema once, then says there is nothing to do; it never prints the password', async () => {
    const fresh = new URL(database.current().url)
    const name = `${database.current().name}_migrate`
    await database.current().admin(`CREATE DATABASE ${name}`)
    try {
      fresh.pathname = `/${name}`
      fresh.password = 'not-needed-by-trust'
      const settings = await prepareInstance({ url: fresh.toString() })
      const first = runCli(['migrate', '--settings', settings])
      expect(await first.exited).toBe(0)
      expect(first.stdout).toMatch(
        new RegExp(
          `^flowadmin: migrated the database at 127\\.0\\.0\\.1:\\d+/\\w+ from schema version 0 to ${SCHEMA_VERSION}\n$`,
        ),
      )
      const again = runCli(['migrate', '--settings', settings])
      expect(await again.exited).toBe(0)
      expect(again.stdout).toMatch(new RegExp(`is at schema version ${SCHEMA_VERSION}; nothing to do\n$`))
      expect(first.stdout + first.stderr + again.stdout + again.stderr).not.toContain('not-needed-by-trust')
    } finally {
      await database.current().admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    }
  })
})
