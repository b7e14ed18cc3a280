import type { SqliteDatabase, SqliteStatement } from './driver.js'

/** What a change of the desired state touches, and what its revision's readers depend on. */
export const FLEET_STATE_KEY = 'fleet-state'

/** Bumps the fleet's revision: run inside the transaction of the change it counts. */
export const prepareBump = (db: SqliteDatabase): SqliteStatement =>
  db.prepare('UPDATE fleet_state SET revision = revision + 1')
