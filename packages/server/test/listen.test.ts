import { connect, createServer } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { type Listener, listen, StartupError } from '../src/index.js'

const open: Listener[] = []
afterEach(async () => {
  for (const listener of open.splice(0)) await listener.close(0)
})

/** A server whose `/slow` answers only when released; it tells when a slow request arrived. */
async function slowServer() {
  let release = () => {}
  const released = new Promise<void>((resolve) => {
    release = resolve
  })
  let arrived = () => {}
  const slowArrived = new Promise<void>((resolve) => {
    arrived = resolve
  })
  const listener = await listen(
    async (request) => {
      if (new URL(request.url).pathname === '/slow') {
        arrived()
        await released
        return new Response('slow done')
      }
      return new Response('fast')
    },
    '127.0.0.1',
    0,
  )
  open.push(listener)
  return { listener, base: `http://127.0.0.1:${listener.address.port}`, release, slowArrived }
}

describe('listen', () => {
  it('serves on a free port of 127.0.0.1 when asked for port 0', async () => {
    const { listener, base } = await slowServer()
    expect(listener.address.address).toBe('127.0.0.1')
    expect(listener.address.port).toBeGreaterThan(0)
    expect(await (await fetch(`${base}/`)).text()).toBe('fast')
  })

  it('stops accepting at close but lets a request in flight finish', async () => {
    const { listener, base, release, slowArrived } = await slowServer()
    const slow = fetch(`${base}/slow`)
    await slowArrived
    const closed = listener.close(10_000)
    const refused = await fetch(`${base}/`, { headers: { connection: 'close' } }).catch(
      (error: unknown) => error,
    )
    expect((refused as { cause?: { code?: string } }).cause?.code).toBe('ECONNREFUSED')
    release()
    const response = await slow
    expect(response.status).toBe(200)
    expect(await response.text()).toBe('slow done')
    await closed
  })

  it('cuts requests that outlive the grace period', async () => {
    const { listener, base, slowArrived } = await slowServer()
    const slow = fetch(`${base}/slow`)
    await slowArrived
    const started = Date.now()
    await listener.close(100)
    expect(Date.now() - started).toBeLessThan(5_000)
    await expect(slow).rejects.toThrow()
  })

  it('answers a request it cannot read, and keeps the answer readable while the client still sends', async () => {
    const { listener } = await slowServer()
    // The request line is refused at once, while much of the body is already on its way.
    const sent = await sendWhileAnswered(
      listener.address.port,
      'PUT2 /audit/events HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\nConnection: close\r\n\r\n',
    )
    expect(sent.errors).toEqual([])
    expect(sent.received).toBe('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n')
  })

  it('keeps an answer given before the body was read readable while the client still sends', async () => {
    // The app refuses from the headers alone, as a body over the limit is refused (413).
    const listener = await listen(async () => new Response('too large', { status: 413 }), '127.0.0.1', 0)
    open.push(listener)
    const sent = await sendWhileAnswered(
      listener.address.port,
      'POST /fleet/instances/edge-1/report HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000\r\nConnection: close\r\n\r\n',
    )
    expect(sent.errors).toEqual([])
    expect(sent.received).toMatch(/^HTTP\/1\.1 413 [\s\S]*\r\n\r\ntoo large$/)
  })

  it('fails with a clear message when the port is in use', async () => {
    const taken = createServer()
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve))
    const port = (taken.address() as { port: number }).port
    try {
      const error = await listen(() => new Response(), '127.0.0.1', port).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(StartupError)
      expect((error as Error).message).toBe(`cannot listen on 127.0.0.1:${port}: the port is already in use`)
    } finally {
      await new Promise((resolve) => taken.close(resolve))
    }
  })
})

/**
 * Sends `head` and much of a body at once, then more 200 ms later, reading nothing meanwhile: a
 * reset of the connection (the server cut it while the body still came) would have dropped the
 * answer by then. What the connection received whole, and its errors.
 */
async function sendWhileAnswered(
  port: number,
  head: string,
): Promise<{ received: string; errors: string[] }> {
  const socket = connect(port, '127.0.0.1')
  const errors: string[] = []
  socket.on('error', (error: NodeJS.ErrnoException) => errors.push(error.code ?? error.message))
  socket.pause()
  const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
  await new Promise((resolve) => socket.once('connect', resolve))
  socket.write(Buffer.concat([Buffer.from(head), Buffer.alloc(262_144, 0x61)]))
  await pause(200)
  socket.write(Buffer.alloc(65_536, 0x61))
  await pause(200)
  const received: Buffer[] = []
  socket.on('data', (chunk: Buffer) => received.push(chunk))
  socket.resume()
  await new Promise((resolve) => socket.once('close', resolve))
  return { received: Buffer.concat(received).toString('latin1'), errors }
}
