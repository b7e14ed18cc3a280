// Connections to the directory for the directory port (ldap.ts): each one encrypted before anything
// is sent (ldaps://, or StartTLS on ldap:// unless the settings allow the clear), verified against
// the settings' CA, never silently reopened (ldapts would reconnect without StartTLS), and kept in
// small pools: one for the service account's searches, one for the people's binds.
import * as net from 'node:net'
import * as tls from 'node:tls'
import { Client } from 'ldapts'
import type { LdapSettings } from '../config/settings/ldap.js'

/**
 * A connection: its client, and whether its socket closed. (ldapts does not see a StartTLS
 * connection close: it watches the plain socket the TLS one replaced.)
 */
export interface Connection {
  client: Client
  readonly closed: boolean
}

/**
 * Opens a connection to the first of the settings' URLs that answers: connected, encrypted as the
 * settings say, and bound as the service account when `bindAsService`.
 */
export async function openConnection(settings: LdapSettings, bindAsService: boolean): Promise<Connection> {
  let failure: unknown
  for (const url of settings.urls) {
    const connection = connectionTo(settings, url)
    const { client } = connection
    try {
      if (url.startsWith('ldap:') && settings.startTls) await client.startTLS(tlsOptionsFor(settings, url))
      if (bindAsService) await client.bind(settings.bindDn, settings.bindPassword)
      return connection
    } catch (error) {
      failure = error
      destroy(connection)
    }
  }
  throw failure
}

/** TLS options for `url`: the settings' CA (else the system's), and the host checked against the certificate. */
function tlsOptionsFor(settings: LdapSettings, url: string): tls.ConnectionOptions {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '')
  return {
    ...(settings.ca !== undefined && { ca: settings.ca }),
    host,
    // SNI names hosts, never addresses; the certificate is checked against `host` either way.
    ...(net.isIP(host) === 0 && { servername: host }),
    minVersion: 'TLSv1.2',
  }
}

/**
 * A Client over one socket at most (with its TLS layer): should it close, the next operation
 * fails instead of reconnecting, and the pool opens a new, encrypted connection. Its sockets are
 * unreferenced (an idle connection does not hold the process), and their closing is seen
 * whichever layer closes.
 */
function connectionTo(settings: LdapSettings, url: string): Connection {
  let opened = false
  let closed = false
  const watch = <T extends net.Socket>(socket: T): T => {
    socket.once('close', () => {
      closed = true
    })
    return socket
  }
  const once = <T extends net.Socket>(open: () => T): T => {
    if (opened) throw new Error('the connection to the directory closed')
    opened = true
    const socket = watch(open())
    socket.unref()
    return socket
  }
  const secure = url.startsWith('ldaps:')
  const tlsOptions = secure ? tlsOptionsFor(settings, url) : undefined
  const client = new Client({
    url,
    timeout: settings.timeout,
    connectTimeout: settings.timeout,
    ...(tlsOptions !== undefined && { tlsOptions }),
    createConnection: ((port: number, host: string) =>
      once(() => net.connect(port, host))) as typeof net.connect,
    createSecureConnection: ((...args: Parameters<typeof tls.connect>) =>
      // StartTLS upgrades the socket it was given; ldaps:// opens its one socket here.
      secure ? once(() => tls.connect(...args)) : watch(tls.connect(...args))) as typeof tls.connect,
  })
  return {
    client,
    get closed() {
      return closed || !client.isConnected
    },
  }
}

/** Closes a connection for good, whatever state it is in. */
export function destroy(connection: Connection): void {
  connection.client.unbind().catch(() => {})
}

/** A bounded pool of connections: at most `size` open or opening at once; the others wait. */
export function createConnectionPool(size: number, open: () => Promise<Connection>) {
  const idle: Connection[] = []
  const waiting: Array<() => void> = []
  let count = 0
  const wake = () => waiting.shift()?.()
  const drop = (connection: Connection) => {
    count--
    destroy(connection)
  }
  return {
    /** A connection of the pool's, opened when none is idle and the pool is not full; else waits. */
    async acquire(): Promise<Connection> {
      for (;;) {
        const connection = idle.pop()
        if (connection !== undefined) {
          if (!connection.closed) return connection
          drop(connection)
          continue
        }
        if (count < size) {
          count++
          try {
            return await open()
          } catch (error) {
            count--
            wake()
            throw error
          }
        }
        await new Promise<void>((resolve) => waiting.push(resolve))
      }
    },
    /** Gives a connection back: kept when `healthy` and still open, else closed. */
    release(connection: Connection, healthy: boolean): void {
      if (healthy && !connection.closed) idle.push(connection)
      else drop(connection)
      wake()
    },
    /** Closes the idle connections. */
    close(): void {
      for (const connection of idle.splice(0)) drop(connection)
    },
  }
}

export type ConnectionPool = ReturnType<typeof createConnectionPool>
