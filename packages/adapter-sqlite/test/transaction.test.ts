import type { ModuleDescriptor } from '@flowadmin/core'
import { tokenRecord } from '@flowadmin/testkit'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { createSqliteStores, openDatabase } from '../src/index.js'
import { module } from './records.js'
import { createTempFolder } from './temp.js'

const temp = createTempFolder()
afterAll(() => temp.remove())

/**
 * A database on which a token named "fail at commit" makes the commit of its transaction fail: a
 * trigger breaks a deferred foreign key, which SQLite checks only at COMMIT.
 */
function failingAtCommit(path: string) {
  const db = openDatabase(path)
  db.exec(`
    CREATE TABLE commit_guard_parent (id TEXT PRIMARY KEY);
    CREATE TABLE commit_guard (parent TEXT REFERENCES commit_guard_parent (id) DEFERRABLE INITIALLY DEFERRED);
    CREATE TRIGGER commit_guard_trigger AFTER INSERT ON tokens WHEN NEW.name = 'fail at commit'
    BEGIN INSERT INTO commit_guard VALUES ('missing'); END;
  `)
  return db
}

const hashes = (path: string) => {
  const other = new Database(path, { readonly: true })
  try {
    return (other.prepare('SELECT hash FROM tokens ORDER BY hash').all() as Array<{ hash: string }>).map(
      (row) => row.hash,
    )
  } finally {
    other.close()
  }
}

describe('group commit over better-sqlite3 transactions', () => {
  it('a commit that fails fails every change and read of its group, keeps none, and the next group works', async () => {
    const path = temp.file()
    const db = failingAtCommit(path)
    const stores = createSqliteStores(db)
    await stores.modules.upsert(module('m'))
    const results = await Promise.allSettled([
      stores.modules.setEnabled('m', ['main'], false),
      stores.tokens.save(tokenRecord('a'.repeat(64), { id: 'id-a' })),
      stores.tokens.save(tokenRecord('b'.repeat(64), { id: 'id-b', kind: 'api', name: 'fail at commit' })),
      stores.modules.list(),
    ])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected', 'rejected'])
    expect((results[0] as PromiseRejectedResult).reason).toMatchObject({
      code: 'SQLITE_CONSTRAINT_FOREIGNKEY',
    })
    expect(db.inTransaction).toBe(false)
    expect((await stores.modules.find('m'))?.sets[0]?.enabled).toBe(true)
    expect(hashes(path)).toEqual([])

    await stores.tokens.save(tokenRecord('c'.repeat(64), { id: 'id-c' }))
    expect(hashes(path)).toEqual(['c'.repeat(64)])
    await stores.close()
    db.close()
  })

  it('holds the write lock only while a group commits, not while its changes wait', async () => {
    const path = temp.file()
    const stores = createSqliteStores(path)
    const other = new Database(path, { timeout: 0 })
    const saved = stores.tokens.save(tokenRecord('d'.repeat(64), { id: 'id-d' }))
    // Another connection writes at once (no busy wait allowed) while the change waits for its group.
    other.exec('BEGIN IMMEDIATE; CREATE TABLE written_meanwhile (x); COMMIT')
    await saved
    expect(hashes(path)).toEqual(['d'.repeat(64)])
    other.close()
    await stores.close()
  })

  it('a change made from inside another change is a savepoint of it, undone alone when it throws', async () => {
    const path = temp.file()
    const db = openDatabase(path)
    const stores = createSqliteStores(db)
    await stores.modules.upsert(module('outer'))
    const nested: Array<Promise<unknown>> = []
    // A module whose set types cannot be written: its change throws after writing the module row.
    const broken = { name: 'inner', version: '1.0.0', sets: [{ name: 'main', types: [1n] }] }
    const outer = stores.modules.upsert({
      ...module('outer'),
      get version() {
        nested.push(stores.modules.upsert(broken as unknown as ModuleDescriptor))
        nested.push(stores.tokens.save(tokenRecord('e'.repeat(64), { id: 'id-e' })))
        return '2.0.0'
      },
    })
    expect(await outer).toMatchObject({ name: 'outer', version: '2.0.0' })
    const settled = await Promise.allSettled(nested)
    expect(settled.map((r) => r.status)).toEqual(['rejected', 'fulfilled'])
    expect((await stores.modules.list()).map((m) => m.name)).toEqual(['outer'])
    expect(hashes(path)).toEqual(['e'.repeat(64)])
    await stores.close()
    db.close()
  })
})

describe("a change that bumps the fleet's revision", () => {
  it('is not kept when the bump fails: a group assignment is written whole or not at all', async () => {
    const path = temp.file()
    const db = openDatabase(path)
    const stores = createSqliteStores(db)
    const before = await stores.fleet.revision()
    db.exec(`CREATE TRIGGER refuse_bump BEFORE UPDATE ON fleet_state
             BEGIN SELECT RAISE(ABORT, 'revision refused'); END`)
    const assignment = { group: 'line-1', instance: 'press-1', by: 'admin', at: 1 }
    await expect(stores.groups.assign(assignment)).rejects.toThrow('revision refused')
    expect(await stores.groups.assignments()).toEqual([])
    db.exec('DROP TRIGGER refuse_bump')
    expect(await stores.groups.assign(assignment)).toBe(true)
    db.exec(`CREATE TRIGGER refuse_bump BEFORE UPDATE ON fleet_state
             BEGIN SELECT RAISE(ABORT, 'revision refused'); END`)
    await expect(stores.groups.unassign('line-1', 'press-1')).rejects.toThrow('revision refused')
    expect(await stores.groups.assignments()).toEqual([assignment])
    expect(await stores.fleet.revision()).toBe(before + 1)
    await stores.close()
    db.close()
  })
})
