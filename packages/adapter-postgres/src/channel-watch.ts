import { messageOf } from '@flowadmin/core'
import pg from 'pg'

export interface ChannelWatchOptions {
  /** Milliseconds between checks that the listening connection still answers. Default 2000. */
  heartbeatMs?: number | undefined
  /** Milliseconds before the first reconnection attempt; doubles up to 5000. Default 250. */
  retryMs?: number | undefined
  /** Told when the listening connection is lost (it reconnects by itself). */
  onError?: ((message: string) => void) | undefined
}

/** What a watch tells its owner. */
export interface ChannelHandlers {
  /** A notification's payload, in the order the server sent them. */
  notified(payload: string): void
  /** Listening (re)started: anything sent while no connection listened is lost. */
  listening(): void
  /** The connection was lost (or closed); nothing is heard until `listening` again. */
  lost(): void
  /** A heartbeat is sent now: until it comes back, the connection may be dead. */
  beat?(): void
  /** A heartbeat came back: the connection still answered at this moment. */
  alive?(): void
}

/** A running watch; `close()` stops it and its connection. */
export interface ChannelWatch {
  /** Resolves once the first LISTEN is in place (or rejects if that first connection fails). */
  ready: Promise<void>
  close(): Promise<void>
}

const MAX_RETRY_MS = 5000

/**
 * Listens on `channel` on a connection of its own. A connection that errs, ends or stops
 * answering the heartbeat is dropped (`lost`) and opened again, with backoff (`listening`).
 */
export function watchChannel(
  config: pg.ClientConfig,
  channel: string,
  handlers: ChannelHandlers,
  what: string,
  options: ChannelWatchOptions = {},
): ChannelWatch {
  const heartbeatMs = options.heartbeatMs ?? 2000
  const firstRetry = options.retryMs ?? 250
  const report = options.onError ?? (() => {})
  let closed = false
  let client: pg.Client | null = null
  let heartbeat: NodeJS.Timeout | null = null
  let retry: NodeJS.Timeout | null = null
  let delay = firstRetry

  const drop = (current: pg.Client, why: string) => {
    if (client !== current) return
    client = null
    if (heartbeat) clearInterval(heartbeat)
    heartbeat = null
    handlers.lost()
    // A server that stopped answering would never complete a polite end: cut the socket too.
    current.end().catch(() => {})
    ;(current as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy()
    if (closed) return
    report(`listening for ${what}: ${why}; reconnecting`)
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
      if (client === current && message.channel === channel && message.payload !== undefined)
        handlers.notified(message.payload)
    })
    try {
      await current.connect()
      await current.query(`LISTEN ${channel}`)
    } catch (error) {
      drop(current, messageOf(error))
      throw error
    }
    if (client !== current) return
    delay = firstRetry
    let pending = false
    heartbeat = setInterval(() => {
      // One check at a time: one that has not come back yet is the one that tells.
      if (pending) return
      pending = true
      handlers.beat?.()
      current.query('SELECT 1').then(
        () => {
          pending = false
          if (client === current) handlers.alive?.()
        },
        (error: unknown) => drop(current, messageOf(error)),
      )
    }, heartbeatMs)
    heartbeat.unref()
    handlers.listening()
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
