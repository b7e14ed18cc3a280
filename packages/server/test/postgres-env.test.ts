// Where the server finds its PostgreSQL database: postgres.url, else DATABASE_URL, else PG*.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { useTestDatabase } from '../../adapter-postgres/test/pg-server.js'
import { type RunningServer, StartupError, startServer } from '../src/index.js'
import { captureLog } from './log-capture.js'

const database = useTestDatabase()
const VARIABLES = ['DATABASE_URL', 'PGHOST', 'PGPORT', 'PGDATABASE', 'PGUSER', 'PGPASSWORD'] as const
let saved: Record<string, string | undefined>
let userDir: string
const running: RunningServer[] = []

beforeEach(async () => {
  saved = Object.fromEntries(VARIABLES.map((name) => [name, process.env[name]]))
  for (const name of VARIABLES) delete process.env[name]
  userDir = await mkdtemp(path.join(tmpdir(), 'flowadmin-pg-env-'))
})
afterEach(async () => {
  for (const server of running.splice(0)) await server.close()
  for (const name of VARIABLES) {
    if (saved[name] === undefined) delete process.env[name]
    else process.env[name] = saved[name]
  }
  await rm(userDir, { recursive: true, force: true })
})

const start = async () => {
  const server = await startServer({
    port: 0,
    userDir,
    settings: { storage: 'postgres' },
    stdout: () => {},
    logger: captureLog().logger,
  })
  running.push(server)
  return server
}

describe('the PostgreSQL address', () => {
  it('comes from DATABASE_URL when the settings name none', async () => {
    process.env.DATABASE_URL = database.current().url
    const { hostname, port } = new URL(database.current().url)
    expect((await start()).storage).toBe(`postgres ${hostname}:${port}/${database.current().name}`)
  })

  it('comes from the standard PG* variables without a URL', async () => {
    const url = new URL(database.current().url)
    process.env.PGHOST = url.hostname
    process.env.PGPORT = url.port
    process.env.PGDATABASE = database.current().name
    process.env.PGUSER = decodeURIComponent(url.username)
    if (url.password !== '') process.env.PGPASSWORD = decodeURIComponent(url.password)
    const server = await start()
    expect(server.storage).toBe(`postgres ${url.hostname}:${url.port}/${database.current().name}`)
    expect((await fetch(`${server.url}/nodes`)).status).toBe(200)
  })

  it('is named, host and port, in the one-line error when nothing answers there', async () => {
    process.env.DATABASE_URL = 'postgres://flow:hunter2@127.0.0.1:1/flows'
    const error = await start().catch((caught: unknown) => caught)
    expect(error).toBeInstanceOf(StartupError)
    expect((error as Error).message).toMatch(/^cannot reach PostgreSQL at 127\.0\.0\.1:1\/flows: [^\n]+$/)
    expect((error as Error).message).not.toContain('hunter2')
  })
})
