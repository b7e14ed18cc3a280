import type { Queryable } from './database.js'

/**
 * The channel on which the fleet's changes are announced: `revision:<n>` when the desired state
 * reached revision n, `report:<id>` when an instance's report was saved.
 */
export const FLEET_CHANNEL = 'flowadmin_fleet'

/** Bumps the fleet's revision and announces it when the transaction commits, never before. */
export const BUMP_SQL = `WITH bumped AS (UPDATE flowadmin_fleet_state SET revision = revision + 1 RETURNING revision)
  SELECT pg_notify('${FLEET_CHANNEL}', 'revision:' || revision) FROM bumped`

/** Bumps the revision inside the transaction of the change it counts. */
export async function bumpRevision(client: Queryable): Promise<void> {
  await client.query(BUMP_SQL)
}
