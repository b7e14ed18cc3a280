// The built `flowadmin` command with `"storage": "postgres"`, on a throw-away database:
// `modules forget` works on that database, and a server that cannot be reached or refuses says
// where its address comes from, never printing the URL's password.
import { readdir, writeFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { freePort, useTestDatabase } from '../../adapter-postgres/test/pg-server.js'
import { runCliToEnd, useUserDir } from './cli-process.js'

const database = useTestDatabase()

const dir = useUserDir('cli-pg')

const flowadmin = (args: string[], env: NodeJS.ProcessEnv = {}) => runCliToEnd(args, { env })

const writeSettings = (postgres: Record<string, unknown> | undefined) =>
  writeFile(dir.settingsFile, JSON.stringify({ storage: 'postgres', ...(postgres && { postgres }) }))

describe('flowadmin modules forget, with "storage": "postgres"', () => {
  it('drops the stored state from the configured database, not from a file in userDir', async () => {
    await writeSettings({ url: database.current().url })
    expect((await flowadmin(['migrate', '--settings', dir.settingsFile])).code).toBe(0)
    await database
      .current()
      .query("INSERT INTO flowadmin_modules (name, version) VALUES ('gone-module', '1.0.0')")
    await database
      .current()
      .query(
        "INSERT INTO flowadmin_node_sets (module, name, position, types, enabled) VALUES ('gone-module', 'gone', 0, ARRAY['gone'], false)",
      )

    const forgot = await flowadmin(['modules', 'forget', 'gone-module', '--settings', dir.settingsFile])
    expect(forgot).toEqual({
      code: 0,
      stdout:
        'forgot the stored state of gone-module: if it is installed, its node sets start enabled at the next start\n',
      stderr: '',
    })
    expect((await database.current().query('SELECT name FROM flowadmin_modules')).rows).toEqual([])
    expect((await database.current().query('SELECT name FROM flowadmin_node_sets')).rows).toEqual([])
    expect(await flowadmin(['modules', 'forget', 'gone-module', '--settings', dir.settingsFile])).toEqual({
      code: 0,
      stdout: 'no stored state for gone-module\n',
      stderr: '',
    })
    // No SQLite file was made on the way.
    expect(await readdir(dir.userDir)).toEqual(['settings.json'])
  })

  it('takes the address from DATABASE_URL when the settings name none', async () => {
    await writeSettings(undefined)
    const env = { DATABASE_URL: database.current().url }
    expect((await flowadmin(['migrate', '--settings', dir.settingsFile], env)).code).toBe(0)
    await database
      .current()
      .query("INSERT INTO flowadmin_modules (name, version) VALUES ('env-module', '2.0.0')")
    const forgot = await flowadmin(['modules', 'forget', 'env-module', '--settings', dir.settingsFile], env)
    expect(forgot.code).toBe(0)
    expect(forgot.stdout).toMatch(/^forgot the stored state of env-module: /)
  })
})

const WHERE_FROM =
  'its address comes from "postgres.url" in the settings, else the DATABASE_URL variable, else the PG* variables (PGHOST, PGPORT, PGDATABASE, PGUSER, PGPASSWORD)'

describe('flowadmin start, when PostgreSQL cannot be used', () => {
  it('says where the address comes from when nothing answers there, without the password', async () => {
    const port = await freePort()
    await writeSettings({ url: `postgres://flow:s3cret-pw@127.0.0.1:${port}/flows`, timeoutMs: 2000 })
    const started = await flowadmin(['start', '--settings', dir.settingsFile, '--port', '0'])
    expect(started.code).toBe(1)
    expect(started.stdout).toBe('')
    expect(started.stderr).toBe(
      `flowadmin: cannot reach PostgreSQL at 127.0.0.1:${port}/flows: connect ECONNREFUSED 127.0.0.1:${port}\n` +
        `flowadmin: is PostgreSQL running at 127.0.0.1:${port}? ${WHERE_FROM}\n`,
    )
    expect(started.stderr).not.toContain('s3cret-pw')
  })

  it('says where the address comes from when PostgreSQL refuses it, without the password', async () => {
    const url = new URL(database.server().url)
    url.password = 's3cret-pw'
    url.pathname = '/flowadmin_no_such_database'
    await writeSettings(undefined)
    const started = await flowadmin(['start', '--settings', dir.settingsFile, '--port', '0'], {
      DATABASE_URL: url.toString(),
    })
    expect(started.code).toBe(1)
    const lines = started.stderr.split('\n')
    expect(lines[0]).toMatch(
      /^flowadmin: PostgreSQL at \S+\/flowadmin_no_such_database refused the connection: /,
    )
    expect(lines[1]).toBe(
      `flowadmin: check the user, password and database name of the address: ${WHERE_FROM}`,
    )
    expect(started.stderr).not.toContain('s3cret-pw')
  })
})
