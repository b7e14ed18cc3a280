import { messageOf } from '@flowadmin/core'
import pg from 'pg'
import { MODULE_CHANNEL } from './module-store.js'

export interface ModuleWatchOptions {
  /** Milliseconds between checks that the listening connection still answers. Default 2000. */
  heartbeatMs?: number | undefined
  /** Milliseconds before the first reconnection attempt; doubles up to 5000. Default 250. */
  retryMs?: number | undefined
  /** Told when the listening connection is lost (it reconnects by itself). */
  onError?: ((message: string) => void) | undefined
}

/** A running watch; `close()` stops it and its connection. */
export interface ModuleWatch {
  /** Resolves once the first LISTEN is in place (or rejects if that first connection fails). */
  ready: Promise<void>
  close(): Promise<void>
}

const MAX_RETRY_MS = 5000

/**
 * Listens for module announcements on a connection of its own. `onChange(name)` runs for each
 * announced module, and `onChange(null)` each time listening (re)starts: notifications sent while
 * no connection listened are lost, so the receiver then checks every module. A connection that
 * errs, ends or stops answering the heartbeat is dropped and opened again, with backoff.
 */
export function watchModules(
  config: pg.ClientConfig,
  onChange: (module: string | null) => Promise<void> | void,
  options: ModuleWatchOptions = {},
): ModuleWatch {
  const heartbeatMs = options.heartbeatMs ?? 2000
  const firstRetry = options.retryMs ?? 250
  const report = options.onError ?? (() => {})
  let closed = false
  let client: pg.Client | null = null
  let heartbeat: NodeJS.Timeout | null = null
  let retry: NodeJS.Timeout | null = null
  let delay = firstRetry

  const deliver = (module: string | null) => {
    try {
      Promise.resolve(onChange(module)).catch((error: unknown) =>
        report(`loading announced module changes failed: ${messageOf(error)}`),
      )
    } catch (error) {
      report(`loading announced module changes failed: ${messageOf(error)}`)
    }
  }

  const drop = (current: pg.Client, why: string) => {
    if (client !== current) return
    client = null
    if (heartbeat) clearInterval(heartbeat)
    heartbeat = null
    // A server that stopped answering would never complete a polite end: cut the socket too.
    current.end().catch(() => {})
    ;(current as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy()
    if (closed) return
    report(`listening for module changes: ${why}; reconnecting`)
    retry = setTimeout(() => {
      retry = null
      void connect().catch(() => {})
    }, delay)
    delay = Math.min(delay * 2, MAX_RETRY_MS)
  }

  async function connect(): Promise<void> {
    const current = new pg.Client(config)
    client = current
    current.on('error', (error) => drop(current, messageOf(error)))
    current.on('end', () => drop(current, 'the connection ended'))
    current.on('notification', (message) => {
      if (message.channel === MODULE_CHANNEL && message.payload !== undefined) deliver(message.payload)
    })
    try {
      await current.connect()
      await current.query(`LISTEN ${MODULE_CHANNEL}`)
    } catch (error) {
      drop(current, messageOf(error))
      throw error
    }
    if (client !== current) return
    delay = firstRetry
    heartbeat = setInterval(() => {
      current.query('SELECT 1').catch((error: unknown) => drop(current, messageOf(error)))
    }, heartbeatMs)
    heartbeat.unref()
    deliver(null)
  }

  const ready = connect()
  ready.catch(() => {})
  return {
    ready,
    async close() {
      closed = true
      if (retry) clearTimeout(retry)
      const current = client
      if (current) drop(current, 'closed')
    },
  }
}
