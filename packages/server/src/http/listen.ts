import type { IncomingMessage, Server } from 'node:http'
import type { AddressInfo, Socket } from 'node:net'
import type { Duplex } from 'node:stream'
import { serve } from '@hono/node-server'
import { StartupError } from '../errors.js'

type Fetch = (request: Request, env: never) => Response | Promise<Response>

/** What a connection may cost the server, so slow or greedy clients cannot pin connections. */
export interface HttpLimits {
  /** Milliseconds a client has to send the request line and headers; then 408 and close. */
  headersTimeout: number
  /** Milliseconds a client has to send the whole request, body included; then 408 and close. */
  requestTimeout: number
  /** Milliseconds an idle keep-alive connection stays open after a response. */
  keepAliveTimeout: number
  /** Largest request line plus headers, in bytes; more is 431 and close. */
  maxHeaderSize: number
}

export const DEFAULT_HTTP_LIMITS: Readonly<HttpLimits> = {
  headersTimeout: 10_000,
  requestTimeout: 30_000,
  keepAliveTimeout: 5_000,
  maxHeaderSize: 16_384,
}

/**
 * How often Node looks for connections past their headers or request timeout. Its default, 30 s,
 * would let a slow client hold a connection for up to 30 s past a short timeout.
 */
function checkingInterval(limits: HttpLimits): number {
  return Math.min(5_000, Math.max(25, Math.floor(Math.min(limits.headersTimeout, limits.requestTimeout) / 4)))
}

export interface Listener {
  /** The bound address and port (the real port when 0 was asked for). */
  address: AddressInfo
  /**
   * Stops accepting connections, lets requests in flight finish for up to `graceMs`, then cuts
   * the connections that remain. Resolves once the server is closed.
   */
  close(graceMs?: number): Promise<void>
}

/**
 * Serves `fetch` over HTTP on `host:port`, within `limits` (default DEFAULT_HTTP_LIMITS). Rejects
 * with a StartupError when it cannot bind.
 */
export async function listen(
  fetch: Fetch,
  host: string,
  port: number,
  limits: HttpLimits = DEFAULT_HTTP_LIMITS,
): Promise<Listener> {
  if (limits.headersTimeout > limits.requestTimeout) {
    throw new RangeError('headersTimeout must not be longer than requestTimeout')
  }
  const server = await new Promise<Server>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => reject(bindError(error, host, port))
    const started = serve(
      {
        fetch: fetch as never,
        hostname: host,
        port,
        serverOptions: {
          headersTimeout: limits.headersTimeout,
          requestTimeout: limits.requestTimeout,
          keepAliveTimeout: limits.keepAliveTimeout,
          maxHeaderSize: limits.maxHeaderSize,
          connectionsCheckingInterval: checkingInterval(limits),
        },
      },
      () => {
        started.off('error', onError)
        resolve(started)
      },
    ) as Server
    // A bind failure is reported after serve() returns, so it is caught here.
    started.once('error', onError)
  })
  server.on('clientError', answerClientError)
  server.on('request', lingerAfterUnreadBody)

  let closing: Promise<void> | null = null
  return {
    address: server.address() as AddressInfo,
    close(graceMs = 5_000) {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve())
        // Keep-alive connections would hold the server open: close each once it has no request.
        server.closeIdleConnections()
        const idle = setInterval(() => server.closeIdleConnections(), 50)
        const cut = setTimeout(() => server.closeAllConnections(), graceMs)
        idle.unref()
        cut.unref()
        server.once('close', () => {
          clearInterval(idle)
          clearTimeout(cut)
        })
      })
      return closing
    },
  }
}

/** How long a connection whose request could not be read is still read from after its answer. */
const LINGER_MS = 2_000

/** The answers Node gives a request it cannot read, by the parser's error code; 400 otherwise. */
const CLIENT_ERROR_ANSWERS: Readonly<Record<string, string>> = {
  HPE_HEADER_OVERFLOW: 'HTTP/1.1 431 Request Header Fields Too Large\r\nConnection: close\r\n\r\n',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: 'HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\n\r\n',
  ERR_HTTP_REQUEST_TIMEOUT: 'HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n',
}
const BAD_REQUEST = 'HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n'

/** Connections already answered for a request that could not be read. */
const answered = new WeakSet<Duplex>()

/**
 * A request Node's parser refused (a malformed request line, headers too large, too slow): the same
 * answer Node gives, then a lingering close (see linger). Node's own handling destroys the
 * connection at once, and a client still sending its body then gets a reset that can discard the
 * answer before it is read.
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (answered.has(socket)) return
  answered.add(socket)
  const started = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage
  if (error.code === 'ECONNRESET' || !socket.writable || started?.headersSent === true) {
    socket.destroy()
    return
  }
  linger(socket, CLIENT_ERROR_ANSWERS[error.code ?? ''] ?? BAD_REQUEST)
}

/**
 * A lingering close: `socket` half-closed (after `last`, when given), and what the client still
 * sends read and dropped until it closes, or for LINGER_MS, before it is cut.
 */
function linger(socket: Duplex, last?: string): void {
  // What the lingering connection meets later (a reset, a write after the end) is of no concern.
  socket.on('error', () => {})
  if (last === undefined) socket.end()
  else socket.end(last)
  socket.resume()
  socket.once('end', () => socket.destroy())
  setTimeout(() => socket.destroy(), LINGER_MS).unref()
}

/** Sockets whose `destroySoon` lingers when the request it answered was not read whole. */
const lingering = new WeakMap<Socket, IncomingMessage>()

/**
 * An answer given before the request's body was read (413 from its Content-Length, a refusal
 * before the body is looked at): Node ends such a connection (`Connection: close`) as soon as the
 * answer is written, with the same reset as above; here it lingers instead (see linger). A request
 * read whole ends as Node ends it.
 */
function lingerAfterUnreadBody(request: IncomingMessage): void {
  const socket = request.socket as Socket & { destroySoon?: () => void }
  const known = lingering.has(socket)
  lingering.set(socket, request)
  if (known || typeof socket.destroySoon !== 'function') return
  const destroySoon = socket.destroySoon
  socket.destroySoon = function (this: Socket) {
    if (lingering.get(this)?.complete !== false) return destroySoon.call(this)
    linger(this)
  }
}

/**
 * The port asked for is taken by another program. The command adds how to pick another; the
 * message itself names only the address.
 */
export class PortInUseError extends StartupError {
  override readonly name: string = 'PortInUseError'
  constructor(
    readonly host: string,
    readonly port: number,
  ) {
    super(`cannot listen on ${host}:${port}: the port is already in use`)
  }
}

function bindError(error: NodeJS.ErrnoException, host: string, port: number): StartupError {
  const where = `${host}:${port}`
  switch (error.code) {
    case 'EADDRINUSE':
      return new PortInUseError(host, port)
    case 'EACCES':
      return new StartupError(
        `cannot listen on ${where}: permission denied (ports below 1024 need privileges)`,
      )
    case 'EADDRNOTAVAIL':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return new StartupError(`cannot listen on ${where}: no such address on this machine`)
    default:
      return new StartupError(`cannot listen on ${where}: ${error.message}`)
  }
}

/** `http://host:port` of a listener, an IPv6 address in brackets. */
export function originOf(listener: Listener): string {
  const { address, family, port } = listener.address
  return `http://${family === 'IPv6' ? `[${address}]` : address}:${port}`
}
