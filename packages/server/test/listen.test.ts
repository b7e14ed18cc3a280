import { createServer } from 'node:net'
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
