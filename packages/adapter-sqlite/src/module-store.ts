import type { ModuleRecord, ModuleStore } from '@flowadmin/core'
import { byModuleName, type ModuleRow, modulesFromRows } from '@flowadmin/store-support'
import type { SqliteDatabase } from './driver.js'
import { FLEET_STATE_KEY, prepareBump } from './fleet-state.js'
import { createReader } from './reader.js'
import { prepareAll } from './statements.js'
import { createTransaction } from './transaction.js'

/** The statements of the module store. */
export const MODULE_SQL = {
  // One statement reads a module and its sets, so a reader sees one consistent snapshot.
  find: `SELECT m.name AS module, m.version, s.name, s.types, s.enabled
         FROM modules m LEFT JOIN node_sets s ON s.module = m.name
         WHERE m.name = ? ORDER BY s.position`,
  list: `SELECT m.name AS module, m.version, s.name, s.types, s.enabled
         FROM modules m LEFT JOIN node_sets s ON s.module = m.name
         ORDER BY m.name, s.position`,
  upsertModule: `INSERT INTO modules (name, version) VALUES (?, ?)
                 ON CONFLICT (name) DO UPDATE SET version = excluded.version`,
  knownSets: 'SELECT name, enabled FROM node_sets WHERE module = ?',
  dropSets: 'DELETE FROM node_sets WHERE module = ?',
  insertSet: `INSERT INTO node_sets (module, name, position, types, enabled) VALUES (?, ?, ?, ?, ?)`,
  exists: 'SELECT 1 AS found FROM modules WHERE name = ?',
  // The set names arrive as one JSON array, so any number of them is one statement.
  setEnabled: `UPDATE node_sets SET enabled = ?
               WHERE module = ? AND name IN (SELECT value FROM json_each(?)) AND enabled <> ?`,
  remove: 'DELETE FROM modules WHERE name = ?',
} as const

/**
 * Modules and their node sets. A module's sets change in one transaction (upsert, setEnabled),
 * with the bump of the fleet's revision when anything changed; removing a module removes its sets
 * by the foreign key's cascade.
 */
export function createModuleStore(db: SqliteDatabase): ModuleStore {
  const transaction = createTransaction(db)
  const reader = createReader(db)
  const { find, list, upsertModule, knownSets, dropSets, insertSet, exists, setEnabled, remove } = prepareAll(
    db,
    MODULE_SQL,
  )
  const bump = prepareBump(db)

  // What a change to a module touches, and what its readers depend on (see transaction.ts).
  const key = (name: string) => `module:${name}`
  const touches = (name: string) => [key(name), FLEET_STATE_KEY]
  const anyModule = (touched: string) => touched.startsWith('module:')
  const findModule = (name: string): ModuleRecord | null =>
    modulesFromRows(find.all(name) as ModuleRow[])[0] ?? null

  return {
    async upsert(descriptor) {
      return transaction(() => {
        const before = findModule(descriptor.name)
        const known = new Map(
          (knownSets.all(descriptor.name) as Array<{ name: string; enabled: number | bigint }>).map((row) => [
            row.name,
            Number(row.enabled),
          ]),
        )
        upsertModule.run(descriptor.name, descriptor.version)
        dropSets.run(descriptor.name)
        descriptor.sets.forEach((set, position) => {
          insertSet.run(
            descriptor.name,
            set.name,
            position,
            JSON.stringify(set.types),
            known.get(set.name) ?? (set.enabled === false ? 0 : 1),
          )
        })
        const after = findModule(descriptor.name) as ModuleRecord
        if (JSON.stringify(before) !== JSON.stringify(after)) bump.run()
        return after
      }, touches(descriptor.name))
    },
    async find(name) {
      return reader(
        () => findModule(name),
        (touched) => touched === key(name),
      )
    },
    async list() {
      return reader(() => modulesFromRows(list.all() as ModuleRow[]).sort(byModuleName), anyModule)
    },
    async setEnabled(name, sets, enabled) {
      return transaction(() => {
        if (exists.get(name) === undefined) return null
        const flag = enabled ? 1 : 0
        if (setEnabled.run(flag, name, JSON.stringify(sets), flag).changes > 0) bump.run()
        return findModule(name)
      }, touches(name))
    },
    async remove(name) {
      return transaction(() => {
        const removed = remove.run(name).changes > 0
        if (removed) bump.run()
        return removed
      }, touches(name))
    },
  }
}
