// One held poll per instance: a second poll of the same instance ends the first, and a revocation
// ends the poll of the revoked instance. A poll that was not ended would hold for 30 s, past the
// test's time.
import { describe, expect, it } from 'vitest'
import { fleetWorld, instance, leased } from './fleet-world.js'
import { basicHeader } from './helpers.js'

describe('fleet: held polls', () => {
  it('a second held poll of an instance ends the first, answered as if its hold ended; it stays connected', async () => {
    const world = await fleetWorld({ holdSeconds: 30 })
    const admin = await world.login()
    const edge = instance(world, 'edge-1')
    const etag = (await edge.poll()).headers.get('etag') as string
    const first = edge.poll({ 'if-none-match': etag, prefer: 'wait=30' })
    await leased(world, 'edge-1')
    const second = edge.poll({ 'if-none-match': etag, prefer: 'wait=30' })
    const ended = await first
    expect(ended.status).toBe(304)
    expect(ended.headers.get('etag')).toBe(etag)
    // The second is the one held now; a change answers it.
    await world.send('PUT', '/nodes/node-red-node-random', { enabled: false }, admin)
    expect((await second).status).toBe(200)
    const listed = (await (await world.get('/fleet/instances', admin)).json()) as Array<{
      connected: boolean
    }>
    expect(listed).toEqual([expect.objectContaining({ connected: true })])
    expect(world.events.ofType('fleet.disconnected')).toEqual([])
  })

  it('a revocation ends the revoked instance’s held poll at once; its next one is refused', async () => {
    const world = await fleetWorld({ holdSeconds: 30 })
    const admin = await world.login()
    const made = await world.send(
      'POST',
      '/fleet/enrolments',
      { resourceServer: 'fleet', instance: 'nr-1' },
      admin,
    )
    const { token } = (await made.json()) as { token: string }
    const enrolled = await world.send('POST', '/fleet/enrol', { token })
    const { clientId, clientSecret } = (await enrolled.json()) as { clientId: string; clientSecret: string }
    const authorization = basicHeader(clientId, clientSecret)
    const poll = (headers: Record<string, string> = {}) =>
      world.request('/fleet/instances/nr-1/desired', { headers: { authorization, ...headers } })
    const etag = (await poll()).headers.get('etag') as string
    const held = poll({ 'if-none-match': etag, prefer: 'wait=30' })
    await leased(world, 'nr-1')
    expect((await world.send('POST', '/fleet/instances/nr-1/revoke', undefined, admin)).status).toBe(204)
    expect((await held).status).toBe(304)
    expect((await poll()).status).toBe(401)
  })
})

describe('fleet: what another flowadmin sharing the store changed', () => {
  it('a poll that asks not to be held reads the revision, even while held polls take it as known', async () => {
    const world = await fleetWorld({ holdSeconds: 30 })
    const edge = instance(world, 'edge-1')
    const other = instance(world, 'edge-2')
    const etag = (await edge.poll()).headers.get('etag') as string
    // A held poll keeps this flowadmin's looks at the revision going.
    const holding = new AbortController()
    const held = other.poll({ 'if-none-match': etag, prefer: 'wait=30' }, holding.signal).catch(() => null)
    await leased(world, 'edge-2')
    // Past one look (once a second while polls wait): the revision it read is taken as known.
    await new Promise((resolve) => setTimeout(resolve, 1100))
    // Another flowadmin on the same store changes the desired state: no notice reaches this one.
    expect(await world.stores.fleet.setPrune(true)).toBe(true)
    const answer = await edge.poll({ 'if-none-match': etag })
    expect(answer.status).toBe(200)
    expect(answer.headers.get('etag')).not.toBe(etag)
    holding.abort()
    await held
  })
})
