import { describe, expect, test } from 'vitest'
import { createHttpApp } from '../src/index.js'
import { createWorld, expectChallenge, PLAIN, type World } from './helpers.js'

describe('body size limit', () => {
  const big = (bytes: number) =>
    JSON.stringify({ enabled: false, pad: 'x'.repeat(bytes - 30) }).padEnd(bytes, ' ')
  /** PUT /nodes/<PLAIN> with a streamed JSON body, which has no Content-Length. */
  const putStreamed = (world: World, token: string, body: ReadableStream<Uint8Array>) =>
    world.request(`/nodes/${PLAIN.name}`, {
      method: 'PUT',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body,
      duplex: 'half',
    } as RequestInit)

  test('the default is 64 KiB: exactly that is accepted, one byte more is 413', async () => {
    const world = await createWorld()
    const token = await world.login()
    const limit = 64 * 1024
    expect(big(limit)).toHaveLength(limit)
    expect((await world.put(`/nodes/${PLAIN.name}`, big(limit), token)).status).toBe(200)
    const res = await world.put(`/nodes/${PLAIN.name}`, big(limit + 1), token)
    expect(res.status).toBe(413)
    expect(await res.json()).toStrictEqual({
      code: 'payload_too_large',
      message: 'Request body larger than 65536 bytes',
    })
  })

  test('the limit counts the bytes read, not what Content-Length claims', async () => {
    const world = await createWorld({ app: { maxBodyBytes: 100 } })
    const token = await world.login()
    const res = await world.request(`/nodes/${PLAIN.name}`, {
      method: 'PUT',
      headers: {
        'Content-Type': 'application/json',
        'Content-Length': '17',
        Authorization: `Bearer ${token}`,
      },
      body: big(500),
    })
    expect(res.status).toBe(413)
    expect(await world.moduleState(PLAIN.name)).toEqual([['random', true]])
  })

  test('a streamed body without Content-Length is counted as it arrives', async () => {
    const world = await createWorld({ app: { maxBodyBytes: 100 } })
    const token = await world.login()
    let pulled = 0
    const chunk = new TextEncoder().encode(' '.repeat(40))
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++
        if (pulled > 1000) controller.close()
        else controller.enqueue(chunk)
      },
    })
    const res = await putStreamed(world, token, body)
    expect(res.status).toBe(413)
    // It stopped reading soon after the limit.
    expect(pulled).toBeLessThan(10)
  })

  test('a small streamed body passes', async () => {
    const world = await createWorld({ app: { maxBodyBytes: 100 } })
    const token = await world.login()
    const body = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"enabled":'))
        controller.enqueue(new TextEncoder().encode('false}'))
        controller.close()
      },
    })
    const res = await putStreamed(world, token, body)
    expect(res.status).toBe(200)
  })

  test('token endpoint: 413 with an RFC 6749 body and no-store', async () => {
    const world = await createWorld({ app: { maxBodyBytes: 100 } })
    const res = await world.tokenRequest({
      grant_type: 'password',
      username: 'admin',
      password: 'x'.repeat(200),
    })
    expect(res.status).toBe(413)
    expect(res.headers.get('Cache-Control')).toBe('no-store')
    expect(await res.json()).toStrictEqual({
      error: 'invalid_request',
      error_description: 'Request body too large',
    })
    expect(world.hasher.verified).toEqual([])
  })

  test('revoke: 413 with an RFC 6749 body, after authentication', async () => {
    const world = await createWorld({ app: { maxBodyBytes: 100 } })
    const token = await world.login()
    const request = (bearer?: string) =>
      world.request('/auth/revoke', {
        method: 'POST',
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          ...(bearer ? { Authorization: `Bearer ${bearer}` } : {}),
        },
        body: `token=${'x'.repeat(200)}`,
      })
    await expectChallenge(await request())
    const res = await request(token)
    expect(res.status).toBe(413)
    expect(((await res.json()) as { error: string }).error).toBe('invalid_request')
  })

  test('maxBodyBytes must be a whole number', async () => {
    const world = await createWorld()
    expect(() => createHttpApp(world.core, { version: '1', maxBodyBytes: 1.5 })).toThrow(RangeError)
    expect(() => createHttpApp(world.core, { version: '1', maxBodyBytes: -1 })).toThrow(RangeError)
  })
})
