import { describe, expect, test } from 'vitest'
import { createWorld, grant, PLAIN } from './helpers.js'

/** A body that sends `start` and then fails, as when the client goes away mid-body. */
function abortedBody(start: string): ReadableStream<Uint8Array> {
  let sent = false
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent) return controller.error(new Error('aborted'))
      sent = true
      controller.enqueue(new TextEncoder().encode(start))
    },
  })
}

describe('a body the client stops sending', () => {
  const setup = async () => {
    const logged: unknown[] = []
    const world = await createWorld({ app: { onUnexpectedError: (error) => logged.push(error) } })
    return { world, logged, token: await world.login() }
  }

  test('PUT /nodes: 400 invalid_request, not an unexpected error, and nothing changes', async () => {
    const { world, logged, token } = await setup()
    const res = await world.request(`/nodes/${PLAIN.name}`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: abortedBody('{"enabled":'),
      duplex: 'half',
    } as RequestInit)
    expect(res.status).toBe(400)
    expect(await res.json()).toStrictEqual({ code: 'invalid_request', message: 'Request body incomplete' })
    expect(logged).toEqual([])
    expect(await world.moduleState(PLAIN.name)).toEqual([['random', true]])
  })

  test('POST /auth/token and /auth/revoke: 400 in the RFC 6749 shape, nothing logged', async () => {
    const { world, logged, token } = await setup()
    const form = new URLSearchParams(grant()).toString()
    for (const [path, headers] of [
      ['/auth/token', {}],
      ['/auth/revoke', { Authorization: `Bearer ${token}` }],
    ] as const) {
      const res = await world.request(path, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded', ...headers },
        body: abortedBody(form.slice(0, 20)),
        duplex: 'half',
      } as RequestInit)
      expect(res.status).toBe(400)
      expect(await res.json()).toStrictEqual({
        error: 'invalid_request',
        error_description: 'Request body incomplete',
      })
    }
    expect(logged).toEqual([])
    expect((await world.get('/settings', token)).status).toBe(200)
  })
})
