import { tokenRecord } from '@flowadmin/testkit'
import Database from 'better-sqlite3'
import { afterAll, describe, expect, it } from 'vitest'
import { createSqliteStores, openDatabase } from '../src/index.js'
import { createTempFolder } from './temp.js'

const temp = createTempFolder()
afterAll(() => temp.remove())

const live = (hash: string) => tokenRecord(hash, { createdAt: 0, expiresAt: Date.now() + 60_000 })

describe('the lookup by hash, which every authenticated request makes', () => {
  it('sees what another connection committed since its last answer: a revoke, a use, a new token', async () => {
    const path = temp.file()
    const stores = createSqliteStores(path)
    await stores.tokens.save(live('kept'))
    await stores.tokens.save(live('revoked'))
    expect((await stores.tokens.findByHash('kept'))?.lastAddress).toBeNull()
    expect(await stores.tokens.findByHash('revoked')).not.toBeNull()
    expect(await stores.tokens.findByHash('new')).toBeNull()

    // The command line, or another process on the file.
    const other = new Database(path)
    other.prepare('DELETE FROM tokens WHERE hash = ?').run('revoked')
    other.prepare('UPDATE tokens SET last_address = ? WHERE hash = ?').run('10.0.0.7', 'kept')
    other.close()
    await createSqliteStores(openDatabase(path)).tokens.save(live('new'))

    expect(await stores.tokens.findByHash('revoked')).toBeNull()
    expect((await stores.tokens.findByHash('kept'))?.lastAddress).toBe('10.0.0.7')
    expect((await stores.tokens.findByHash('new'))?.hash).toBe('new')
    await stores.close()
  })

  it('sees every change made through a store on the same connection, another store included', async () => {
    const db = openDatabase(temp.file())
    const one = createSqliteStores(db)
    const two = createSqliteStores(db)
    await one.tokens.save(live('a'))
    await one.tokens.save(live('b'))
    const a = await one.tokens.findByHash('a')
    expect(a).not.toBeNull()
    expect(await one.tokens.findByHash('b')).not.toBeNull()
    await two.tokens.delete(a?.id as string)
    expect(await one.tokens.findByHash('a')).toBeNull()
    await two.tokens.touch((await one.tokens.findByHash('b'))?.id as string, 1234, '10.0.0.8')
    expect(await one.tokens.findByHash('b')).toMatchObject({ lastUsedAt: 1234, lastAddress: '10.0.0.8' })
    await two.tokens.deleteByUser('admin')
    expect(await one.tokens.findByHash('b')).toBeNull()
    db.close()
  })
})
