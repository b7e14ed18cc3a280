import type { TokenRecord, TrailEvent } from '@flowadmin/core'
import { afterEach, describe, expect, it } from 'vitest'
import { T0 } from './contract-part.js'
import { instanceReport } from './fleet-contract.js'
import type { OpenedStores } from './store-contract.js'
import { tokenRecord } from './token-contract.js'

/** A database of one SQL dialect at an old schema version, for the upgrade contract. */
export interface OldDatabase {
  /**
   * Inserts a row into `table` (named without the dialect's prefix). Lists and booleans come as
   * JavaScript values, to be written as the dialect's schema keeps them.
   */
  insert(table: string, row: Record<string, unknown>): Promise<void>
  /**
   * Opens the stores over it, which brings it to the current schema as it would in use; `from`
   * and `to` are the schema versions before and after.
   */
  upgrade(): Promise<{ stores: OpenedStores; from: number; to: number }>
  /** Releases the database, once its stores are closed. */
  close(): Promise<void>
}

/** How the upgrade contract reaches one SQL dialect. */
export interface UpgradeDialect {
  /** The dialect's schema steps, in order: its MIGRATIONS. */
  migrations: readonly string[]
  /** A new database holding the first `version` steps of the dialect's schema, recorded as at `version`. */
  createAt(version: number): Promise<OldDatabase>
}

/** `record` as a row of the tokens table of a schema that has no `missing` columns yet. */
const tokenRow = (record: TokenRecord, ...missing: string[]): Record<string, unknown> => {
  const row: Record<string, unknown> = {
    hash: record.hash,
    id: record.id,
    kind: record.kind,
    name: record.name,
    username: record.username,
    client_id: record.clientId,
    scope: record.scope,
    fingerprint: record.fingerprint,
    created_at: record.createdAt,
    expires_at: record.expiresAt,
    last_used_at: record.lastUsedAt,
    last_address: record.lastAddress,
    agent: record.agent,
    audience: record.audience,
    sign_in: record.signIn,
  }
  return Object.fromEntries(Object.entries(row).filter(([column]) => !missing.includes(column)))
}

/**
 * The upgrade every SQL dialect passes: a database written by an older version, at the schema it
 * had then, is brought up to date when the stores open it, and what it held still reads.
 */
export function describeUpgradeContract(name: string, dialect: UpgradeDialect): void {
  describe(`upgrade contract: ${name}`, () => {
    /** Closed after each test, the last opened first. */
    let opened: Array<{ close(): Promise<void> }> = []
    afterEach(async () => {
      for (const one of opened.reverse()) await one.close()
      opened = []
    })
    /** The version that lacks the step whose text has `words`: the schema just before it. */
    const versionBefore = (words: string) => dialect.migrations.findIndex((step) => step.includes(words))
    const oldDatabase = async (version: number) => {
      const old = await dialect.createAt(version)
      opened.push(old)
      return old
    }
    /** Upgrades `old`, checking it went from `version` to the current schema. */
    const upgrade = async (old: OldDatabase, version: number) => {
      const { stores, from, to } = await old.upgrade()
      opened.push(stores)
      expect({ from, to }).toEqual({ from: version, to: dialect.migrations.length })
      return stores
    }

    it('upgrades a database from before audiences: its tokens keep everything and have none yet, until the core gives them their client’s', async () => {
      const version = versionBefore('ADD COLUMN audience')
      const old = await oldDatabase(version)
      const consoleToken = tokenRecord('h1', {
        id: 'console',
        expiresAt: T0 + 60_000,
        audience: null,
        signIn: null,
      })
      const editor = tokenRecord('h2', {
        id: 'editor',
        clientId: 'fleet',
        createdAt: T0 + 1,
        expiresAt: T0 + 60_000,
        audience: null,
        signIn: null,
      })
      for (const record of [consoleToken, editor]) {
        await old.insert('tokens', tokenRow(record, 'audience', 'sign_in'))
      }
      const stores = await upgrade(old, version)
      expect(await stores.tokens.findById('console')).toEqual(consoleToken)
      expect(await stores.tokens.findById('editor')).toMatchObject({ clientId: 'fleet', audience: null })
      await stores.tokens.save({
        ...((await stores.tokens.findById('editor')) as TokenRecord),
        audience: 'fleet',
      })
      expect((await stores.tokens.list(null)).map((token) => token.audience)).toEqual([null, 'fleet'])
    })

    it('upgrades a database from before sessions recorded how they signed in: its tokens keep everything, with no method', async () => {
      const version = versionBefore('ADD COLUMN sign_in')
      expect(version).toBeGreaterThan(0)
      const old = await oldDatabase(version)
      const record = tokenRecord('h1', {
        id: 'console',
        expiresAt: T0 + 60_000,
        agent: 'curl 8.5.0',
        signIn: null,
      })
      await old.insert('tokens', tokenRow(record, 'sign_in'))
      const stores = await upgrade(old, version)
      expect(await stores.tokens.findById('console')).toEqual(record)
      await stores.tokens.save(
        tokenRecord('h2', { createdAt: record.createdAt + 1, signIn: 'password_totp' }),
      )
      expect((await stores.tokens.list('admin')).map((token) => token.signIn)).toEqual([
        null,
        'password_totp',
      ])
    })

    it('upgrades a database from before challenges were carried by browsers: what waited at a start is gone, factors keep everything, and the key and spent challenges serve', async () => {
      const version = versionBefore('sign_in_key (')
      expect(version).toBeGreaterThan(0)
      const old = await oldDatabase(version)
      await old.insert('passkey_challenges', {
        key: 'old-sign-in',
        purpose: 'sign_in',
        username: null,
        address: '10.0.0.1',
        expires_at: T0 + 60_000,
      })
      await old.insert('sso_sign_ins', {
        key: 'old-start',
        address: '10.0.0.1',
        sign_in: JSON.stringify({ returnTo: '/' }),
        expires_at: T0 + 60_000,
      })
      await old.insert('totp_factors', {
        username: 'alice',
        secret: 'sealed',
        created_at: T0,
        confirmed_at: T0 + 1,
        last_step: 9,
      })
      const stores = await upgrade(old, version)
      expect(await stores.factors.findTotp('alice')).toEqual({
        username: 'alice',
        secret: 'sealed',
        createdAt: T0,
        confirmedAt: T0 + 1,
        confirmedAtSignIn: false,
        lastStep: 9,
      })
      expect(await stores.sso.signInKey('first', T0)).toBe('first')
      expect(await stores.sso.signInKey('second', T0)).toBe('first')
      expect(await stores.sso.spendChallenge('old-sign-in', T0 + 60_000, T0)).toBe(true)
      expect(await stores.sso.spendChallenge('old-sign-in', T0 + 60_000, T0)).toBe(false)
      expect(await stores.sso.deleteExpiredSignIns(T0 + 60_000, 10)).toBe(1)
    })

    it('upgrades a trail from before it kept the time received and the reporter: each event was received when it claims, and counts in its resource server’s budget', async () => {
      const version = versionBefore('ADD COLUMN received')
      expect(version).toBeGreaterThan(0)
      const old = await oldDatabase(version)
      const row = (time: number, server: string | null, i: number) => ({
        time,
        server,
        instance: server === null ? null : 'line-1',
        actor: 'alice',
        event: server === null ? 'login.failed' : 'flows.set',
        outcome: server === null ? 'failure' : 'success',
        address: '10.0.0.7',
        address_reported: server !== null,
        details: JSON.stringify({ i }),
      })
      await old.insert('trail', row(T0, null, 0))
      await old.insert('trail', row(0, 'fleet', 1))
      await old.insert('trail', row(T0 + 1, 'back\\slash', 2))
      await old.insert('trail', row(T0 + 2, 'fleet', 3))
      // A username with a backslash, from before usernames were escaped where they are.
      const odd = tokenRecord('h1', { username: 'a\\u0041 \\', expiresAt: T0 + 60_000 })
      await old.insert('tokens', tokenRow(odd))
      const stores = await upgrade(old, version)

      const events = await stores.trail.search({}, 10, null)
      expect(
        events.map(({ time, received, reporter, server }) => ({ time, received, reporter, server })),
      ).toEqual([
        { time: T0 + 2, received: T0 + 2, reporter: 'fleet', server: 'fleet' },
        { time: T0 + 1, received: T0 + 1, reporter: 'back\\slash', server: 'back\\slash' },
        { time: 0, received: 0, reporter: 'fleet', server: 'fleet' },
        { time: T0, received: T0, reporter: null, server: null },
      ])
      expect((await stores.trail.reporters()).sort()).toEqual(['back\\slash', 'fleet'])
      // Each source's bounds apply to the events from before: the fleet's oldest goes, no other.
      expect(await stores.trail.deleteBeyond('fleet', 1, 10)).toBe(1)
      expect(await stores.trail.deleteBefore(null, T0, 10)).toBe(0)
      expect((await stores.trail.search({}, 10, null)).map((event) => event.details.i)).toEqual([3, 2, 0])
      // A known reporter's allowance starts full.
      const pace = { costMs: 100, burstMs: 100 }
      const { seq: _, ...entry } = events[0] as TrailEvent
      expect(await stores.trail.appendReport('fleet', [{ ...entry, details: { i: 4 } }], pace, T0)).toEqual({
        appended: true,
      })

      expect(await stores.tokens.findByHash('h1')).toEqual(odd)
      expect(await stores.tokens.list('a\\u0041 \\')).toEqual([odd])
      expect(await stores.tokens.usernames()).toEqual(['a\\u0041 \\'])
    })

    it('upgrades a database from before the fleet’s revision: its instances and installs read, not connected, and each change bumps the revision', async () => {
      const version = versionBefore('fleet_state (')
      expect(version).toBeGreaterThan(0)
      const old = await oldDatabase(version)
      const report = instanceReport()
      await old.insert('fleet_instances', {
        id: 'edge-1',
        resource_server: 'fleet',
        seen_at: T0,
        reported_at: T0 + 1,
        report: JSON.stringify(report),
      })
      await old.insert('fleet_instances', { id: 'edge-2', resource_server: 'fleet', seen_at: T0 + 2 })
      await old.insert('fleet_installs', { module: 'm', action: 'install', version: '1.0.0', at: T0 })
      const stores = await upgrade(old, version)
      const connectedNot = { leaseUntil: 0, connected: false, sequence: null }
      expect(await stores.fleet.find('edge-1')).toEqual({
        id: 'edge-1',
        resourceServer: 'fleet',
        lastSeen: T0,
        reportedAt: T0 + 1,
        report,
        ...connectedNot,
      })
      expect((await stores.fleet.digests()).map((digest) => [digest.id, digest.lastSeen])).toEqual([
        ['edge-1', T0],
        ['edge-2', T0 + 2],
      ])
      const desired = await stores.fleet.desired()
      expect(desired).toEqual({
        revision: expect.any(Number),
        prune: false,
        installs: [{ module: 'm', action: 'install', version: '1.0.0', at: T0 }],
      })
      // A report of the old helper's kind (no sequence), then one with a sequence: both saved.
      expect(await stores.fleet.saveReport('edge-1', 'fleet', report, null, T0 + 5)).toBe('saved')
      expect(await stores.fleet.saveReport('edge-1', 'fleet', report, 1_000, T0 + 6)).toBe('saved')
      expect(
        await stores.fleet.touch([{ id: 'edge-2', resourceServer: 'fleet' }], T0 + 60_000, T0 + 7),
      ).toEqual(['edge-2'])
      await stores.modules.upsert({ name: 'kit', version: '1.0.0', sets: [] })
      expect(await stores.fleet.revision()).toBe(desired.revision + 1)
    })

    it('upgrades fleet installs from before they recorded the tarball: old ones read without it, new ones keep it', async () => {
      const version = versionBefore('ADD COLUMN integrity')
      expect(version).toBeGreaterThan(0)
      const old = await oldDatabase(version)
      await old.insert('fleet_installs', { module: 'm', action: 'install', version: '1.0.0', at: T0 })
      const stores = await upgrade(old, version)
      expect((await stores.fleet.desired()).installs).toEqual([
        { module: 'm', action: 'install', version: '1.0.0', at: T0 },
      ])
      const vetted = { integrity: 'sha512-AAAA', tarball: 'https://registry.example/m/-/m-1.0.1.tgz' }
      await stores.fleet.setInstall({
        module: 'm',
        action: 'install',
        version: '1.0.1',
        ...vetted,
        at: T0 + 1,
      })
      expect((await stores.fleet.desired()).installs).toEqual([
        { module: 'm', action: 'install', version: '1.0.1', ...vetted, at: T0 + 1 },
      ])
    })
  })
}
