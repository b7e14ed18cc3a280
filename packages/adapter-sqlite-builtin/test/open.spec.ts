// Run by Bun (`bun test`, see test:runtimes): what a user of either built-in driver meets on disk.
import { readFileSync, writeFileSync } from 'node:fs'
import { openDatabase, SCHEMA_VERSION, SqliteStoreError, type SqliteStores } from '@flowadmin/adapter-sqlite'
import { tokenRecord } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'
import { bunSqlite, createBunSqliteStores } from '../src/bun.js'
import { createNodeSqliteStores, nodeSqlite } from '../src/node-sqlite.js'
import { tempFolder } from './temp.js'

const temp = tempFolder()
const token = tokenRecord('h1')

const drivers = [
  { name: 'bun:sqlite', driver: bunSqlite, open: createBunSqliteStores },
  { name: 'node:sqlite', driver: nodeSqlite, open: createNodeSqliteStores },
]

/** The error `work` throws, or a failure when it throws none. */
function thrown(work: () => unknown): SqliteStoreError {
  try {
    work()
  } catch (error) {
    expect(error).toBeInstanceOf(SqliteStoreError)
    return error as SqliteStoreError
  }
  throw new Error('expected a SqliteStoreError')
}

describe.each(drivers)('$name', ({ name, driver, open }) => {
  it('keeps what it acknowledged when the file is opened again, by either driver', async () => {
    const file = temp.file()
    const first: SqliteStores = open(file)
    await first.tokens.save(token)
    await first.modules.upsert({ name: 'm', version: '1.0.0', sets: [{ name: 's', types: ['t'] }] })
    await first.modules.setEnabled('m', ['s'], false)
    await first.close()
    for (const other of drivers) {
      const again = other.open(file)
      expect(await again.tokens.findByHash('h1')).toEqual(token)
      expect((await again.modules.find('m'))?.sets[0]?.enabled).toBe(false)
      await again.close()
    }
  })

  it('opens the file with a write-ahead log and the current schema', async () => {
    const file = temp.file()
    await open(file).close()
    const db = openDatabase(file, { driver, readonly: true })
    expect(db.prepare('PRAGMA journal_mode').get()).toEqual({ journal_mode: 'wal' })
    expect(db.prepare('PRAGMA user_version').get()).toEqual({ user_version: SCHEMA_VERSION })
    db.close()
  })

  it('refuses a file that is not a database, and leaves it as it was', () => {
    const file = temp.file()
    const bytes = `not a database ${name} `.repeat(300)
    writeFileSync(file, bytes)
    const error = thrown(() => open(file))
    expect(error.code).toBe('corrupt')
    expect(error.message).toContain(file)
    expect(readFileSync(file, 'utf8')).toBe(bytes)
  })

  it('refuses a file written by a newer schema, and leaves it untouched', async () => {
    const file = temp.file()
    await open(file).close()
    const db = openDatabase(file, { driver })
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`)
    db.close()
    expect(thrown(() => open(file)).code).toBe('newer_schema')
  })

  it('says so when the folder does not exist, and creates nothing', () => {
    const error = thrown(() => open(`${temp.path}/missing/flowadmin.db`))
    expect(error.code).toBe('missing')
  })
})
