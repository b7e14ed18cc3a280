// `storage` and `postgres`: where tokens, module states and the trail are kept.
import * as v from 'valibot'
import { SettingsError } from '../../errors.js'
import { strictObject, whole } from './fields.js'

export interface PostgresSettings {
  /** `postgres://…`; null: `DATABASE_URL`, else the standard `PG*` variables. */
  url: string | null
  /** Most connections for requests. */
  pool: number
  /** Milliseconds a connection attempt or statement may take before requests get 503. */
  timeoutMs: number
}

export const DEFAULT_POSTGRES_POOL = 10
export const DEFAULT_POSTGRES_TIMEOUT_MS = 5000

export const storage = v.picklist(
  ['sqlite', 'memory', 'postgres'],
  'must be "sqlite", "memory" or "postgres"',
)

// The URL may hold a password: no message here repeats the value.
export const postgres = strictObject({
  url: v.optional(
    v.pipe(
      v.string('must be a string'),
      v.check(
        (url) => /^postgres(ql)?:\/\/./.test(url) && URL.canParse(url),
        'must be a URL such as "postgres://user:password@host:5432/database"',
      ),
    ),
  ),
  pool: v.optional(whole(1, 1000)),
  timeoutMs: v.optional(whole(100, 600_000)),
})

/** The PostgreSQL store's settings with their defaults; refused when another store is used. */
export function postgresOf(
  parsed: {
    storage?: v.InferOutput<typeof storage> | undefined
    postgres?: v.InferOutput<typeof postgres> | undefined
  },
  source: string,
): PostgresSettings {
  if (parsed.postgres !== undefined && parsed.storage !== 'postgres') {
    throw new SettingsError(`${source}: postgres: is set, but storage is not "postgres"`)
  }
  return {
    url: parsed.postgres?.url ?? null,
    pool: parsed.postgres?.pool ?? DEFAULT_POSTGRES_POOL,
    timeoutMs: parsed.postgres?.timeoutMs ?? DEFAULT_POSTGRES_TIMEOUT_MS,
  }
}
