// What the fleet's tests share: a fleet over memory stores with the doubles, and reports.
import { createMemoryStores } from '@flowadmin/adapter-memory'
import type { FleetOptions, FleetStore, InstanceReport, ReportedModule, Stores } from '@flowadmin/core'
import { createCoreWithDoubles } from '@flowadmin/testkit'

export const KIT = 'node-red-contrib-kit'

/** KIT as an instance has it: sets a and b, enabled as given. */
export const kit = (a = true, b = true, version = '1.0.0'): ReportedModule => ({
  name: KIT,
  version,
  sets: [
    { name: 'a', types: ['a'], enabled: a, loaded: a },
    { name: 'b', types: ['b'], enabled: b, loaded: b },
  ],
})

export const report = (overrides: Partial<InstanceReport> = {}): InstanceReport => ({
  nodeRedVersion: '4.1.2',
  modules: [kit()],
  typesInUse: [],
  applied: null,
  failures: [],
  ...overrides,
})

/** Every call to the fleet store, by method name. */
export function countingFleetStore(fleet: FleetStore) {
  const calls: string[] = []
  const counted = Object.fromEntries(
    Object.entries(fleet).map(([name, method]) => [
      name,
      (...args: unknown[]) => {
        calls.push(name)
        return (method as (...a: unknown[]) => unknown)(...args)
      },
    ]),
  ) as unknown as FleetStore
  return { counted, calls }
}

/** A core in fleet mode over memory stores (or those given) and the doubles; `admin` acts. */
export function fleetWorld(options: FleetOptions = {}, stores: Stores = createMemoryStores()) {
  const world = createCoreWithDoubles({ stores, adminAuth: () => null, fleet: options })
  const fleet = world.core.fleet
  if (fleet === null) throw new Error('fleet mode is off')
  const actor = { username: 'admin', clientId: 'service-admin', address: '10.0.0.1' }
  /** The instance reports, and the report is saved (sequence: each call's own, growing). */
  let sequence = 0
  const send = async (id: string, body: InstanceReport, address: string | null = null) => {
    sequence += 1
    const outcome = await fleet.report(id, 'fleet', body, sequence, address)
    if (!outcome.ok) throw new Error(`report refused: ${outcome.error.code}`)
    return outcome.value
  }
  /** The current revision's version, as an agent that applied it reports it. */
  const version = async () => (await fleet.desired()).version
  return { ...world, fleet, actor, send, version }
}
