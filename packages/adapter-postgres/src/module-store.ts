import type { ModuleRecord, ModuleStore } from '@flowadmin/core'
import { byModuleName, type ModuleRow, modulesFromRows } from '@flowadmin/store-support'
import type { Database, Queryable } from './database.js'
import { bumpRevision } from './fleet-state.js'

/** The channel on which a module's name is announced when its node sets change. */
export const MODULE_CHANNEL = 'flowadmin_modules'

/** The statements of the module store. */
export const MODULE_SQL = {
  // One statement reads a module and its sets, so a reader sees one committed snapshot.
  find: `SELECT m.name AS module, m.version, s.name, s.types, s.enabled
         FROM flowadmin_modules m LEFT JOIN flowadmin_node_sets s ON s.module = m.name
         WHERE m.name = $1 ORDER BY s.position`,
  list: `SELECT m.name AS module, m.version, s.name, s.types, s.enabled
         FROM flowadmin_modules m LEFT JOIN flowadmin_node_sets s ON s.module = m.name
         ORDER BY m.name, s.position`,
  // Writing the module row first locks it, so writers of one module take turns.
  upsertModule: `INSERT INTO flowadmin_modules (name, version) VALUES ($1, $2)
                 ON CONFLICT (name) DO UPDATE SET version = excluded.version`,
  knownSets: 'SELECT name, enabled FROM flowadmin_node_sets WHERE module = $1',
  dropSets: 'DELETE FROM flowadmin_node_sets WHERE module = $1',
  insertSets: `INSERT INTO flowadmin_node_sets (module, name, position, types, enabled)
               SELECT $1, set ->> 'name', position - 1,
                      ARRAY(SELECT jsonb_array_elements_text(set -> 'types')), (set ->> 'enabled')::boolean
               FROM jsonb_array_elements($2::jsonb) WITH ORDINALITY AS sets (set, position)`,
  lock: 'SELECT 1 FROM flowadmin_modules WHERE name = $1 FOR UPDATE',
  setEnabled: `UPDATE flowadmin_node_sets SET enabled = $2
               WHERE module = $1 AND name = ANY($3) AND enabled <> $2`,
  remove: 'DELETE FROM flowadmin_modules WHERE name = $1',
  // Delivered to every listening instance when the transaction commits, never before.
  announce: `SELECT pg_notify('${MODULE_CHANNEL}', $1)`,
} as const

const findIn = async (client: Queryable, name: string): Promise<ModuleRecord | null> =>
  modulesFromRows((await client.query<ModuleRow>(MODULE_SQL.find, [name])).rows)[0] ?? null

/**
 * Modules and their node sets. A module's sets change in one transaction (upsert, setEnabled),
 * which also announces the module on MODULE_CHANNEL and, when anything changed, bumps the fleet's
 * revision; removing a module removes its sets by the foreign key's cascade.
 */
export function createModuleStore(db: Database): ModuleStore {
  return {
    async upsert(descriptor) {
      return db.transaction(async (client) => {
        // Locked first, so the module read is the one this write replaces.
        await client.query(MODULE_SQL.lock, [descriptor.name])
        const before = await findIn(client, descriptor.name)
        await client.query(MODULE_SQL.upsertModule, [descriptor.name, descriptor.version])
        const known = new Map(
          (
            await client.query<{ name: string; enabled: boolean }>(MODULE_SQL.knownSets, [descriptor.name])
          ).rows.map((row) => [row.name, row.enabled]),
        )
        await client.query(MODULE_SQL.dropSets, [descriptor.name])
        const sets = descriptor.sets.map((set) => ({
          name: set.name,
          types: set.types,
          enabled: known.get(set.name) ?? set.enabled ?? true,
        }))
        await client.query(MODULE_SQL.insertSets, [descriptor.name, JSON.stringify(sets)])
        const after = (await findIn(client, descriptor.name)) as ModuleRecord
        if (JSON.stringify(before) !== JSON.stringify(after)) await bumpRevision(client)
        return after
      })
    },
    async find(name) {
      return findIn(db, name)
    },
    async list() {
      return modulesFromRows((await db.query<ModuleRow>(MODULE_SQL.list)).rows).sort(byModuleName)
    },
    async setEnabled(name, sets, enabled) {
      return db.transaction(async (client) => {
        if ((await client.query(MODULE_SQL.lock, [name])).rowCount === 0) return null
        const changed = await client.query(MODULE_SQL.setEnabled, [name, enabled, sets])
        if ((changed.rowCount ?? 0) > 0) await bumpRevision(client)
        await client.query(MODULE_SQL.announce, [name])
        return findIn(client, name)
      })
    },
    async remove(name) {
      return db.transaction(async (client) => {
        const removed = ((await client.query(MODULE_SQL.remove, [name])).rowCount ?? 0) > 0
        if (removed) await bumpRevision(client)
        return removed
      })
    },
  }
}
