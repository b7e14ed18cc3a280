import type pg from 'pg'
import { toOperationError } from './errors.js'

/** A connection a transaction runs on: the part of pg's client the stores use. */
export interface Queryable {
  query<R extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<R>>
}

/** The stores' way to the database: single statements and transactions, outages turned into StoreUnavailable. */
export interface Database {
  query<R extends pg.QueryResultRow>(sql: string, params?: unknown[]): Promise<pg.QueryResult<R>>
  /** Runs `work` in one transaction; commits before it resolves, rolls back when it throws. */
  transaction<T>(work: (client: Queryable) => Promise<T>): Promise<T>
}

export function createDatabase(pool: pg.Pool): Database {
  return {
    async query(sql, params) {
      try {
        return await pool.query(sql, params)
      } catch (error) {
        throw toOperationError(error)
      }
    },
    async transaction(work) {
      let client: pg.PoolClient
      try {
        client = await pool.connect()
      } catch (error) {
        throw toOperationError(error)
      }
      // While checked out, a connection that breaks between statements emits 'error' on the
      // client; unheard, that would end the process. The statement in progress fails anyway.
      const ignore = () => {}
      client.on('error', ignore)
      let failure: unknown = null
      try {
        await client.query('BEGIN')
        const result = await work(client)
        await client.query('COMMIT')
        return result
      } catch (error) {
        failure = error
        await client.query('ROLLBACK').catch(() => {})
        throw toOperationError(error)
      } finally {
        // A client that failed is dropped, not reused: its connection may be broken or busy.
        client.off('error', ignore)
        client.release(failure === null ? undefined : true)
      }
    },
  }
}
