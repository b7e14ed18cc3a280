import type { Stores } from '@flowadmin/core'
import { MEMORY, openDatabase } from './database.js'
import type { SqliteDatabase } from './driver.js'
import { createEnrolmentStore } from './enrolment-store.js'
import { toStoreError } from './errors.js'
import { createFactorStore } from './factor-store.js'
import { createFleetStore } from './fleet-store.js'
import { createGroupStore } from './group-store.js'
import { createLogSync } from './log-sync.js'
import { migrate } from './migrations.js'
import { createModuleStore } from './module-store.js'
import { createPasskeyStore } from './passkey-store.js'
import { createRolloutStore } from './rollout-store.js'
import { createSnapshotStore } from './snapshot-store.js'
import { createSsoStore } from './sso-store.js'
import { createThrottleStore } from './throttle-store.js'
import { createTokenStore } from './token-store.js'
import { createTrailStore } from './trail-store.js'
import { committed, syncLogAsync } from './transaction.js'

export interface SqliteStores extends Stores {
  /**
   * Closes the database, after a checkpoint, when these stores opened it (given a path); otherwise
   * does nothing.
   */
  close(): Promise<void>
}

/**
 * Every store port over one SQLite database. Given a path, it opens the file with openDatabase
 * and `close()` closes it. Given an open database, it brings its schema up to date, turns on
 * foreign keys, and leaves the connection to its owner: `close()` does not close it, and its
 * journal and sync settings stay the owner's (openDatabase sets the durable ones).
 */
export function createSqliteStores(database: SqliteDatabase | string): SqliteStores {
  const owned = typeof database === 'string'
  const db = owned ? openDatabase(database) : database
  try {
    if (!owned) {
      db.exec('PRAGMA foreign_keys = ON')
      migrate(db, db.name ?? '(an open database)')
    }
    // On a file it opened, the log is synced after each commit off the event loop (see
    // syncLogAsync), so a request waiting for the disk holds up no other request.
    const logSync = owned && database !== MEMORY && db.name !== undefined ? createLogSync(db.name) : null
    if (logSync !== null) syncLogAsync(db, logSync)
    const stores = {
      tokens: createTokenStore(db),
      modules: createModuleStore(db),
      throttle: createThrottleStore(db),
      sso: createSsoStore(db),
      trail: createTrailStore(db),
      fleet: createFleetStore(db),
      enrolments: createEnrolmentStore(db),
      groups: createGroupStore(db),
      snapshots: createSnapshotStore(db),
      factors: createFactorStore(db),
      passkeys: createPasskeyStore(db),
      rollouts: createRolloutStore(db),
    }
    let open = true
    return {
      ...stores,
      async close() {
        // Changes waiting for their commit are committed (and answered) first.
        await committed(db)
        if (owned && open) {
          // Moves every committed write from the log into the database file first, so the file
          // alone holds the state (closing then removes the empty log).
          try {
            db.exec('PRAGMA wal_checkpoint(TRUNCATE)')
          } catch {
            // Another connection is busy with the file: the log stays, and is read back on open.
          }
          db.close()
        }
        logSync?.close()
        open = false
      },
    }
  } catch (error) {
    if (owned) db.close()
    throw toStoreError(error, db.name ?? String(database))
  }
}
