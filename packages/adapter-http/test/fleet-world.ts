// What the fleet mode tests of the HTTP adapter share: a world in fleet mode, the reports its
// instances send, and their polls.
import type { FleetOptions, InstanceReport } from '@flowadmin/core'
import { vi } from 'vitest'
import { createWorld, fleetBasic, PLAIN, SCOPED, type World } from './helpers.js'

/** A report of PLAIN (enabled) and SCOPED (all sets enabled); its flows use `alpha-in`. */
export const report = (overrides: Partial<InstanceReport> = {}): InstanceReport => ({
  nodeRedVersion: '4.1.2',
  modules: [
    {
      name: PLAIN.name,
      version: PLAIN.version,
      sets: [{ name: 'random', types: ['random'], enabled: true, loaded: true }],
    },
    {
      name: SCOPED.name,
      version: SCOPED.version,
      sets: [
        { name: 'alpha', types: ['alpha-in', 'alpha-out'], enabled: true, loaded: true },
        { name: 'beta', types: ['beta'], enabled: true, loaded: true },
        { name: 'gamma', types: ['gamma'], enabled: true, loaded: true },
      ],
    },
  ],
  typesInUse: ['alpha-in'],
  applied: null,
  failures: [],
  ...overrides,
})

/** Fleet mode (PLAIN and SCOPED decided, as the world syncs them); a change's answer waits for no instance unless told. */
export const fleetWorld = (options: FleetOptions = {}) =>
  createWorld({ fleet: { answerWaitMs: 0, ...options } })

/** An instance's own calls. */
export function instance(world: World, id: string) {
  let sequence = 0
  return {
    /** POST its report (with the next sequence unless the body names one); the response. */
    async send(
      body: InstanceReport & { sequence?: number },
      extra: Record<string, unknown> = {},
    ): Promise<Response> {
      sequence += 1
      return world.request(`/fleet/instances/${id}/report`, {
        method: 'POST',
        headers: { authorization: fleetBasic(), 'content-type': 'application/json' },
        body: JSON.stringify({ sequence, ...body, ...extra }),
      })
    },
    /** GET its desired state, with these headers. */
    async poll(headers: Record<string, string> = {}, signal?: AbortSignal): Promise<Response> {
      return world.request(`/fleet/instances/${id}/desired`, {
        headers: { authorization: fleetBasic(), ...headers },
        ...(signal !== undefined && { signal }),
      })
    },
  }
}

/** Waits until the store holds the instance's lease (written within 250 ms of its poll). */
export async function leased(world: World, id: string) {
  await vi.waitFor(
    async () => {
      const digest = (await world.stores.fleet.digests()).find((one) => one.id === id)
      if (digest?.connected !== true) throw new Error(`${id} has no lease yet`)
    },
    { timeout: 2000, interval: 20 },
  )
}

export { PLAIN, SCOPED }
