import { describe, expect, it } from 'vitest'
import { fleetWorld, instance } from './fleet-world.js'
import { PLAIN } from './helpers.js'

const VETTED = {
  integrity: `sha512-${'q'.repeat(86)}==`,
  tarball: `https://registry.example/${PLAIN.name}/-/${PLAIN.name}-0.5.0.tgz`,
}

describe('fleet mode: the instances install the tarball flowadmin vetted', () => {
  it('an install records the exact tarball flowadmin installed, and the desired state carries it', async () => {
    const world = await fleetWorld()
    const token = await world.login()
    world.installer.publish({ ...PLAIN, version: '0.5.0' }, VETTED)
    const installed = await world.post('/nodes', { module: PLAIN.name, version: '0.5.0' }, token)
    expect(installed.status).toBe(200)
    const desired = (await (await instance(world, 'edge-1').poll()).json()) as { installs: unknown[] }
    expect(desired.installs).toEqual([{ module: PLAIN.name, version: '0.5.0', ...VETTED }])
  })

  it('an install whose tarball npm did not record is carried by name and version, as before; a later one that has it replaces it', async () => {
    const world = await fleetWorld()
    const token = await world.login()
    world.installer.publish({ ...PLAIN, version: '0.5.0' })
    expect((await world.post('/nodes', { module: PLAIN.name, version: '0.5.0' }, token)).status).toBe(200)
    const before = (await (await instance(world, 'edge-1').poll()).json()) as { installs: unknown[] }
    expect(before.installs).toEqual([{ module: PLAIN.name, version: '0.5.0' }])
    world.installer.publish({ ...PLAIN, version: '0.5.0' }, VETTED)
    expect((await world.post('/nodes', { module: PLAIN.name, version: '0.5.0' }, token)).status).toBe(200)
    const after = (await (await instance(world, 'edge-1').poll()).json()) as { installs: unknown[] }
    expect(after.installs).toEqual([{ module: PLAIN.name, version: '0.5.0', ...VETTED }])
  })
})
