import { connect, createServer, type Socket } from 'node:net'

/**
 * A TCP relay to a server, for fault tests: `pause()` makes the server look as if it stopped
 * answering (connections stay open, no byte moves either way, new connections hang), `resume()`
 * delivers what was held, and `cut()` resets every connection, as a server crash would.
 */
export interface TcpProxy {
  port: number
  pause(): void
  resume(): void
  cut(): void
  close(): Promise<void>
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  let paused = false
  const sockets = new Set<Socket>()
  // While paused, each held action runs on resume, in order.
  let held: Array<() => void> = []
  const whenLive = (action: () => void) => (paused ? held.push(action) : action())

  const relay = (from: Socket, to: Socket) => {
    from.on('data', (chunk) => whenLive(() => to.write(chunk)))
    from.on('end', () => whenLive(() => to.end()))
    from.on('error', () => to.destroy())
    from.on('close', () => to.destroy())
  }

  const server = createServer((client) => {
    sockets.add(client)
    client.on('close', () => sockets.delete(client))
    client.on('error', () => {})
    whenLive(() => {
      const upstream = connect(targetPort, targetHost)
      sockets.add(upstream)
      upstream.on('close', () => sockets.delete(upstream))
      relay(client, upstream)
      relay(upstream, client)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }

  const cut = () => {
    held = []
    for (const socket of sockets) socket.resetAndDestroy()
    sockets.clear()
  }
  return {
    port,
    pause() {
      paused = true
    },
    resume() {
      paused = false
      const actions = held
      held = []
      for (const action of actions) action()
    },
    cut,
    async close() {
      cut()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}
