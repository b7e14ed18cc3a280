import type { ModuleDescriptor } from '@flowadmin/core'
import { tokenRecord } from '@flowadmin/testkit'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { createSqliteStores, openDatabase, type SqliteDatabase } from '../src/index.js'
import { module, POLICY } from './records.js'
import { createTempFolder } from './temp.js'

const temp = createTempFolder()
afterAll(() => temp.remove())

const T0 = Date.UTC(2026, 0, 1)

const token = (hash: string) => tokenRecord(hash, { id: `id-${hash.slice(0, 8)}`, expiresAt: T0 + 3_600_000 })
const attempt = (address: string) => ({
  pairKey: `user ${address} alice`,
  addressKey: `addr ${address}`,
  knownKey: `known ${address}`,
})

/**
 * A durable database whose commits are counted, and whose next commit can be made to fail (as a
 * full disk or an I/O error would), seen through the connection the stores are given.
 */
function countedDatabase(path: string) {
  const db = openDatabase(path)
  const counter = { commits: 0, failNext: false, levels: [] as number[] }
  const wrapped: SqliteDatabase = {
    prepare(sql) {
      const statement = db.prepare(sql)
      if (sql !== 'COMMIT') return statement
      return {
        run: () => {
          if (counter.failNext) {
            counter.failNext = false
            throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' })
          }
          counter.commits++
          // The sync level each commit was made with: 2 FULL, 1 NORMAL.
          counter.levels.push(
            Number((db.prepare('PRAGMA synchronous').get() as { synchronous: number }).synchronous),
          )
          return statement.run()
        },
        get: () => statement.get(),
        all: () => statement.all(),
      }
    },
    exec: (sql) => db.exec(sql),
    close: () => db.close(),
    get inTransaction() {
      return db.inTransaction
    },
    name: db.name,
  }
  return { db: wrapped, counter }
}

/** What another connection to the file sees: only committed changes. */
function observer(path: string) {
  const other = new Database(path, { readonly: true })
  return {
    tokens: () =>
      (other.prepare('SELECT hash FROM tokens ORDER BY hash').all() as Array<{ hash: string }>).map(
        (r) => r.hash,
      ),
    modules: () =>
      other.prepare('SELECT module, enabled FROM node_sets ORDER BY module').all() as Array<{
        module: string
        enabled: number
      }>,
    close: () => other.close(),
  }
}

/**
 * Stores over a new counted database holding the modules mod-0 to mod-9; `before` is the count of
 * commits once they are in.
 */
async function withTenModules() {
  const path = temp.file()
  const { db, counter } = countedDatabase(path)
  const stores = createSqliteStores(db)
  const names = Array.from({ length: 10 }, (_, i) => `mod-${i}`)
  for (const name of names) await stores.modules.upsert(module(name))
  return { path, db, counter, stores, names, before: counter.commits }
}

describe('group commit', () => {
  it('changes made together, by every store, share one commit, and each resolves once it is committed', async () => {
    const { path, db, counter, stores, names, before } = await withTenModules()
    const seen = observer(path)

    const settled: string[] = []
    const changes = [
      ...names.map((name) => stores.modules.setEnabled(name, ['main'], false).then(() => settled.push(name))),
      stores.tokens.save(token('a'.repeat(64))).then(() => settled.push('token')),
      stores.throttle.begin(attempt('10.0.0.1'), POLICY, T0).then(() => settled.push('throttle')),
    ]
    // Nothing is answered, or visible elsewhere, before the commit.
    await Promise.resolve()
    expect(settled).toEqual([])
    expect(seen.tokens()).toEqual([])

    await Promise.all(changes)
    expect(counter.commits - before).toBe(1)
    expect(settled).toHaveLength(12)
    expect(seen.tokens()).toEqual(['a'.repeat(64)])
    expect(seen.modules().every((row) => row.enabled === 0)).toBe(true)
    seen.close()
    await stores.close()
    db.close()
  })

  it('a change that fails is undone alone: the others in its group are committed', async () => {
    const path = temp.file()
    const stores = createSqliteStores(path)
    await stores.modules.upsert(module('kept'))
    // A set whose types cannot be written fails after the module row was written in its change.
    const broken = { name: 'broken', version: '1.0.0', sets: [{ name: 'main', types: [1n] }] }
    const results = await Promise.allSettled([
      stores.modules.setEnabled('kept', ['main'], false),
      stores.modules.upsert(broken as unknown as ModuleDescriptor),
      stores.tokens.save(token('b'.repeat(64))),
    ])
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled'])
    await stores.close()

    const seen = observer(path)
    expect(seen.modules()).toEqual([{ module: 'kept', enabled: 0 }])
    expect(seen.tokens()).toEqual(['b'.repeat(64)])
    seen.close()
  })

  it('a commit that fails fails every change of its group, undoes them all, and the next group works', async () => {
    const path = temp.file()
    const { db, counter } = countedDatabase(path)
    const stores = createSqliteStores(db)
    await stores.modules.upsert(module('m'))
    counter.failNext = true
    const results = await Promise.allSettled([
      stores.modules.setEnabled('m', ['main'], false),
      stores.tokens.save(token('c'.repeat(64))),
      stores.modules.list(),
    ])
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected', 'rejected'])
    expect((await stores.modules.find('m'))?.sets[0]?.enabled).toBe(true)
    expect(await stores.tokens.findByHash('c'.repeat(64))).toBeNull()

    await stores.tokens.save(token('d'.repeat(64)))
    const seen = observer(path)
    expect(seen.tokens()).toEqual(['d'.repeat(64)])
    expect(seen.modules()).toEqual([{ module: 'm', enabled: 1 }])
    seen.close()
    await stores.close()
    db.close()
  })

  it('a read made while a change waits for its commit answers after that commit, with the change', async () => {
    const stores = createSqliteStores(temp.file())
    await stores.modules.upsert(module('m'))
    const order: string[] = []
    const toggle = stores.modules.setEnabled('m', ['main'], false).then(() => order.push('toggle'))
    const list = stores.modules.list().then((modules) => {
      order.push('list')
      return modules
    })
    const [, modules] = await Promise.all([toggle, list])
    expect(order).toEqual(['toggle', 'list'])
    expect(modules[0]?.sets[0]?.enabled).toBe(false)
    await stores.close()
  })

  it('a read no pending change touches answers at once, so concurrent read-then-write requests share a commit', async () => {
    const { db, counter, stores, names, before } = await withTenModules()
    // As a request to toggle one module does: read it, then change it.
    const toggles = names.map(async (name) => {
      const found = await stores.modules.find(name)
      return stores.modules.setEnabled(name, ['main'], !found?.sets[0]?.enabled)
    })
    const updated = await Promise.all(toggles)
    expect(counter.commits - before).toBe(1)
    expect(updated.map((m) => m?.sets[0]?.enabled)).toEqual(names.map(() => false))

    // A read of a module a pending change touches waits for that commit; another one does not.
    const order: string[] = []
    const toggle = stores.modules.setEnabled('mod-0', ['main'], true).then(() => order.push('toggle mod-0'))
    const other = stores.modules.find('mod-1').then(() => order.push('find mod-1'))
    const same = stores.modules.find('mod-0').then(() => order.push('find mod-0'))
    const tokens = stores.tokens.findById('id-none').then(() => order.push('find token'))
    await Promise.all([toggle, other, same, tokens])
    expect(order).toEqual(['find mod-1', 'find token', 'toggle mod-0', 'find mod-0'])
    await stores.close()
    db.close()
  })

  it('a token issued and not yet committed: listed only after its commit; a lookup by hash answers at once', async () => {
    const stores = createSqliteStores(temp.file())
    const order: string[] = []
    const hash = 'g'.repeat(64)
    const saved = stores.tokens.save(token(hash)).then(() => order.push('save'))
    const listed = stores.tokens.list(null).then((records) => {
      order.push('list')
      return records.map((r) => r.hash)
    })
    const found = stores.tokens.findByHash(hash).then(() => order.push('findByHash'))
    const [, hashes] = await Promise.all([saved, listed, found])
    expect(order).toEqual(['findByHash', 'save', 'list'])
    expect(hashes).toEqual([hash])
    await stores.close()
  })

  it('throttle changes commit without a sync; a change that must be synced waits for its own group', async () => {
    const path = temp.file()
    const { db, counter } = countedDatabase(path)
    const stores = createSqliteStores(db)
    await stores.modules.upsert(module('m'))
    counter.levels.length = 0
    await Promise.all([
      stores.throttle.begin(attempt('10.0.0.1'), POLICY, T0),
      stores.throttle.begin(attempt('10.0.0.2'), POLICY, T0),
    ])
    const [, toggled] = await Promise.all([
      stores.throttle.begin(attempt('10.0.0.3'), POLICY, T0),
      stores.modules.setEnabled('m', ['main'], false),
    ])
    expect(toggled?.sets[0]?.enabled).toBe(false)
    await stores.tokens.save(token('h'.repeat(64)))
    expect(counter.levels).toEqual([1, 1, 2, 2])
    // The connection's own setting is back after the relaxed commit.
    expect(db.prepare('PRAGMA synchronous').get()).toEqual({ synchronous: 2 })
    await stores.close()
    db.close()
  })

  it('close commits the changes still waiting, and answers them', async () => {
    const path = temp.file()
    const stores = createSqliteStores(path)
    const saved = stores.tokens.save(token('e'.repeat(64)))
    await stores.close()
    await expect(saved).resolves.toBeUndefined()
    const seen = observer(path)
    expect(seen.tokens()).toEqual(['e'.repeat(64)])
    seen.close()
  })

  it("inside a caller's own transaction, changes are savepoints of it and the caller commits", async () => {
    const path = temp.file()
    const db = openDatabase(path)
    const stores = createSqliteStores(db)
    db.exec('BEGIN')
    await stores.tokens.save(token('f'.repeat(64)))
    const seen = observer(path)
    expect(seen.tokens()).toEqual([])
    db.exec('COMMIT')
    expect(seen.tokens()).toEqual(['f'.repeat(64)])
    seen.close()
    await stores.close()
    db.close()
  })
})
