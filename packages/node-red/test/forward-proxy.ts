// A forward proxy as an edge network has one: CONNECT tunnels for https:// addresses, and plain
// requests in absolute form (`GET http://host/path`) forwarded for http:// ones. It records what
// went through it, and can cut held requests as a gateway with an idle timeout does.
import { createServer, type IncomingMessage, request, type Server } from 'node:http'
import { type AddressInfo, connect, type Socket } from 'node:net'

/** One request through the proxy: CONNECT and its target, or a method and an absolute URL. */
export interface Proxied {
  method: string
  target: string
  proxyAuthorization: string | undefined
}

export interface ProxyOptions {
  /**
   * Cut a forwarded request that has no answer after this many ms: `'502'` answers 502 with an
   * HTML page of the proxy's own, `'reset'` drops the connection.
   */
  cut?: { afterMs: number; how: '502' | 'reset' }
}

export async function startForwardProxy(options: ProxyOptions = {}) {
  const seen: Proxied[] = []
  const sockets = new Set<Socket>()

  function forward(req: IncomingMessage, res: import('node:http').ServerResponse) {
    seen.push({
      method: req.method ?? '',
      target: req.url ?? '',
      proxyAuthorization: req.headers['proxy-authorization'],
    })
    let target: URL
    try {
      target = new URL(req.url ?? '')
    } catch {
      res.writeHead(400).end('absolute-form requests only')
      return
    }
    const headers = { ...req.headers }
    delete headers['proxy-authorization']
    delete headers['proxy-connection']
    // So the server can tell what came through here.
    headers.via = '1.1 forward-proxy'
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        method: req.method,
        path: `${target.pathname}${target.search}`,
        headers,
      },
      (answer) => {
        clearTimeout(timer)
        res.writeHead(answer.statusCode ?? 502, answer.headers)
        answer.pipe(res)
      },
    )
    const timer =
      options.cut === undefined
        ? undefined
        : setTimeout(() => {
            upstream.destroy()
            if (options.cut?.how === 'reset') {
              req.socket.destroy()
              return
            }
            res.writeHead(502, { 'Content-Type': 'text/html' })
            res.end('<html><body><h1>502 Bad Gateway</h1></body></html>')
          }, options.cut.afterMs)
    upstream.on('error', () => {
      clearTimeout(timer)
      if (!res.headersSent) res.writeHead(502, { 'Content-Type': 'text/plain' }).end('bad gateway')
    })
    req.pipe(upstream)
  }

  const server: Server = createServer(forward)
  server.on('connect', (req: IncomingMessage, client: Socket, head: Buffer) => {
    seen.push({
      method: 'CONNECT',
      target: req.url ?? '',
      proxyAuthorization: req.headers['proxy-authorization'],
    })
    const [host, port] = (req.url ?? '').split(/:(?=\d+$)/)
    const upstream = connect(Number(port), (host ?? '').replace(/^\[(.*)\]$/, '$1'), () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      if (head.length > 0) upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    })
    sockets.add(upstream)
    upstream.on('close', () => sockets.delete(upstream))
    upstream.on('error', () => client.destroy())
    client.on('error', () => upstream.destroy())
  })
  server.on('connection', (socket: Socket) => {
    sockets.add(socket)
    socket.on('close', () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    seen,
    /** Every path that went through, for an http:// target, or the CONNECT targets. */
    paths: () =>
      seen.map((entry) => (entry.method === 'CONNECT' ? entry.target : new URL(entry.target).pathname)),
    async close() {
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

export type ForwardProxy = Awaited<ReturnType<typeof startForwardProxy>>
