import pg from 'pg'

/** Where and how to connect. Anything not given comes from the standard `PG*` variables. */
export interface PostgresOptions {
  /** `postgres://user:password@host:port/database?...`; without it, `PGHOST`, `PGPORT`, ... apply. */
  url?: string | undefined
  /** Most connections this instance opens for requests (one more listens for changes). Default 10. */
  pool?: number | undefined
  /**
   * Milliseconds a connection attempt or a statement may take before the store reports itself
   * unavailable (503). Bounds every request that needs the database. Default 5000.
   */
  timeoutMs?: number | undefined
}

export const DEFAULT_POOL_SIZE = 10
export const DEFAULT_TIMEOUT_MS = 5000

/** The driver settings for these options: bounded waits, keep-alive probes, a name in pg_stat_activity. */
export function clientConfig(options: PostgresOptions): pg.ClientConfig {
  const timeout = options.timeoutMs ?? DEFAULT_TIMEOUT_MS
  return {
    ...(options.url === undefined ? {} : { connectionString: options.url }),
    application_name: 'flowadmin',
    connectionTimeoutMillis: timeout,
    // The server gives up on a statement after `timeout`; the client too, in case the server
    // stops answering altogether (a dead host keeps no promise of a reply).
    statement_timeout: timeout,
    lock_timeout: timeout,
    query_timeout: timeout + 500,
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  }
}

export function poolConfig(options: PostgresOptions): pg.PoolConfig {
  return {
    ...clientConfig(options),
    max: options.pool ?? DEFAULT_POOL_SIZE,
    idleTimeoutMillis: 30_000,
  }
}

/**
 * `host:port/database` of the server these options reach, as the driver resolves them from the
 * URL, the `PG*` variables and its defaults. Never a user name or password.
 */
export function describeTarget(options: PostgresOptions): string {
  try {
    const client = new pg.Client(clientConfig(options)) as pg.Client & { host: string; port: number }
    return `${client.host}:${client.port}${client.database ? `/${client.database}` : ''}`
  } catch {
    return 'the configured PostgreSQL server (its URL could not be read)'
  }
}

/** A connection URL with its password replaced by `***`, fit to print. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    for (const key of [...parsed.searchParams.keys()]) {
      if (key.toLowerCase() === 'password') parsed.searchParams.set(key, '***')
    }
    return parsed.toString()
  } catch {
    return '(a connection URL that cannot be parsed)'
  }
}
