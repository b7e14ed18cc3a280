import type { Clock, EventSink, FleetStore } from '../ports/index.js'

/** How long a lease outlives the longest poll: a poll's start holds the instance for hold + this. */
export const LEASE_GRACE_MS = 10_000

/**
 * Whether each instance is in touch, by lease: a poll's start extends it (hold + 10 s), a poll
 * whose connection closed before its answer ends it, and leases that ran out are expired. Each
 * change of state is one event (`fleet.connected`, `fleet.disconnected`), whichever flowadmin
 * sharing the store sees it: the store says to which one.
 */
export function createLeases(fleet: FleetStore, clock: Clock, events: EventSink, holdMs: number) {
  const emit = (type: 'fleet.connected' | 'fleet.disconnected', instance: string, resourceServer: string) =>
    events.emit({
      type,
      at: clock.now(),
      instance,
      resourceServer,
      username: null,
      clientId: resourceServer,
      address: null,
    })
  return {
    /** These instances started a poll (since the last call). */
    async touch(instances: ReadonlyArray<{ id: string; resourceServer: string }>): Promise<void> {
      if (instances.length === 0) return
      const now = clock.now()
      const servers = new Map(instances.map((instance) => [instance.id, instance.resourceServer]))
      for (const id of await fleet.touch(instances, now + holdMs + LEASE_GRACE_MS, now)) {
        emit('fleet.connected', id, servers.get(id) as string)
      }
    },
    /** The instance's only poll here lost its connection before its answer: it went away. */
    async release(id: string, resourceServer: string): Promise<void> {
      if (await fleet.release(id, clock.now())) emit('fleet.disconnected', id, resourceServer)
    },
    /** Instances whose lease ran out are disconnected now. */
    async expire(): Promise<void> {
      for (const { id, resourceServer } of await fleet.expire(clock.now())) {
        emit('fleet.disconnected', id, resourceServer)
      }
    },
  }
}
