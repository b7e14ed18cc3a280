import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createAdaptorServer } from '@hono/node-server'
import { StartupError } from './errors.js'

type Fetch = (request: Request, env: never) => Response | Promise<Response>

export interface Listener {
  /** The bound address and port (the real port when 0 was asked for). */
  address: AddressInfo
  /**
   * Stops accepting connections, lets requests in flight finish for up to `graceMs`, then cuts
   * the connections that remain. Resolves once the server is closed.
   */
  close(graceMs?: number): Promise<void>
}

/** Serves `fetch` over HTTP on `host:port`. Rejects with a StartupError when it cannot bind. */
export async function listen(fetch: Fetch, host: string, port: number): Promise<Listener> {
  const server = createAdaptorServer({ fetch: fetch as never, hostname: host }) as Server
  await new Promise<void>((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => reject(bindError(error, host, port))
    server.once('error', onError)
    server.listen(port, host, () => {
      server.off('error', onError)
      resolve()
    })
  })

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

function bindError(error: NodeJS.ErrnoException, host: string, port: number): StartupError {
  const where = `${host}:${port}`
  switch (error.code) {
    case 'EADDRINUSE':
      return new StartupError(`cannot listen on ${where}: the port is already in use`)
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
