import { describe, expect, it } from 'vitest'
import { fleetWorld, instance, PLAIN } from './fleet-world.js'

/** An API token of `owner` (a session of theirs makes it) with this scope. */
async function apiToken(world: Awaited<ReturnType<typeof fleetWorld>>, scope: string, owner = 'admin') {
  const session = await world.login(owner)
  const created = await world.post('/auth/tokens', { name: `probe ${scope}`, scope }, session)
  expect(created.status).toBe(201)
  return ((await created.json()) as { token: string }).token
}

describe('fleet mode: installing runs code on every instance, so it needs more than nodes.write', () => {
  it('an API token installs only when its scope names installs.write; * and nodes.write alone are refused', async () => {
    const world = await fleetWorld()
    world.installer.publish({ ...PLAIN, version: '0.5.0' })
    const install = (token: string) => world.post('/nodes', { module: PLAIN.name, version: '0.5.0' }, token)
    for (const scope of ['nodes.write', '*', 'write', 'nodes.read nodes.write']) {
      const refused = await install(await apiToken(world, scope))
      expect(refused.status, scope).toBe(401)
      expect(refused.headers.get('www-authenticate'), scope).toContain('insufficient_scope')
    }
    // Nothing reached the instances.
    const before = (await (await instance(world, 'edge-1').poll()).json()) as { installs: unknown[] }
    expect(before.installs).toEqual([])
    const allowed = await install(await apiToken(world, 'nodes.write installs.write'))
    expect(allowed.status).toBe(200)
    const after = (await (await instance(world, 'edge-1').poll()).json()) as { installs: unknown[] }
    expect(after.installs).toEqual([{ module: PLAIN.name, version: '0.5.0' }])
  })

  it('a person installs within 10 minutes of signing in; later they are asked to sign in again', async () => {
    const world = await fleetWorld()
    world.installer.publish({ ...PLAIN, version: '0.5.0' })
    const session = await world.login()
    world.clock.advance(10 * 60_000 + 1)
    const stale = await world.post('/nodes', { module: PLAIN.name, version: '0.5.0' }, session)
    expect(stale.status).toBe(403)
    expect(await stale.json()).toEqual({
      code: 'reauthentication_required',
      message:
        "Sign in again to install or upgrade on the fleet (it runs the package's code on every instance): your session began more than 10 minutes ago",
    })
    const fresh = await world.post('/nodes', { module: PLAIN.name, version: '0.5.0' }, await world.login())
    expect(fresh.status).toBe(200)
    // Toggling and removing need only nodes.write, as before.
    expect((await world.put(`/nodes/${PLAIN.name}`, { enabled: false }, session)).status).toBe(200)
  })

  it('a person whose permissions do not cover installs.write cannot install on the fleet, even freshly signed in', async () => {
    const world = await fleetWorld()
    world.installer.publish({ ...PLAIN, version: '0.5.0' })
    const editor = await world.signedInWith('editor', 'password')
    const refused = await world.post('/nodes', { module: PLAIN.name, version: '0.5.0' }, editor)
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toContain('insufficient_scope')
    // What nodes.write alone allows, the person still does.
    expect((await world.put(`/nodes/${PLAIN.name}`, { enabled: false }, editor)).status).toBe(200)
  })
})
