// The poll's hold behind a proxy or gateway that ends idle requests: once a held poll is cut (a
// 502 that is not flowadmin's, or a reset, before the hold asked), the agent asks for less, says so
// once, and its polls get through again.
import { waitFor } from '@flowadmin/testkit'
import { afterEach, beforeEach, describe, expect, test } from 'vitest'
import { type FleetInstance, startFleetInstance } from './fleet-setup.js'
import { type ForwardProxy, startForwardProxy } from './forward-proxy.js'

const PROXY_VARIABLES = ['HTTP_PROXY', 'NO_PROXY', 'http_proxy', 'no_proxy']
const saved = Object.fromEntries(PROXY_VARIABLES.map((name) => [name, process.env[name]]))
let fleet: FleetInstance | undefined
let proxy: ForwardProxy | undefined
beforeEach(() => {
  for (const name of PROXY_VARIABLES) delete process.env[name]
})
afterEach(async () => {
  await fleet?.close()
  await proxy?.close()
  fleet = undefined
  proxy = undefined
  for (const name of PROXY_VARIABLES) {
    if (saved[name] === undefined) delete process.env[name]
    else process.env[name] = saved[name]
  }
})

describe.each([
  ['a 502 page of the proxy’s own', '502' as const, 'HTTP 502 from something other than flowadmin'],
  ['a reset connection', 'reset' as const, 'the connection was reset'],
])('a held poll cut by %s', (_name, how, why) => {
  test('the next polls ask for less (80 % of what got through, 5 s at least), said once', async () => {
    proxy = await startForwardProxy({ cut: { afterMs: 7000, how } })
    process.env.HTTP_PROXY = proxy.url
    fleet = await startFleetInstance({ hold: 10 })
    const instance = fleet
    await waitFor(
      () => instance.polls().length >= 3,
      () => `polls: ${instance.polls().map((poll) => poll.headers.prefer)}`,
      { timeoutMs: 20_000 },
    )
    // The first poll is answered at once (no version yet); the second is held, and cut at 7 s.
    expect(instance.polls().map((poll) => poll.headers.prefer)).toEqual(['wait=25', 'wait=10', 'wait=5'])
    expect(instance.settings.lines.filter((line) => line.includes('was cut'))).toEqual([
      `fleet: a poll to flowadmin at ${instance.stub.url} was cut after 7 s (${why}), within the 10 s flowadmin may hold it: a proxy or gateway on the way ends idle requests; polls now ask flowadmin to answer within 5 s`,
    ])
    // Not an outage: nothing else said.
    expect(instance.settings.lines.filter((line) => line.includes('cannot be reached'))).toEqual([])
  }, 40_000)
})
