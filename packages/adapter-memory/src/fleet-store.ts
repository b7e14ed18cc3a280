import type {
  FleetInstall,
  FleetStore,
  InstanceDigest,
  InstanceRecord,
  InstanceReport,
} from '@flowadmin/core'
import { createFleetRevision, type FleetRevision } from './fleet-revision.js'

// Reports are kept as JSON text and parsed for each reader, so no caller shares what is stored.
const byKey =
  <T>(key: (value: T) => string) =>
  (a: T, b: T) =>
    key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0
const byId = byKey((record: { id: string }) => record.id)

/** An instance as kept: its report as JSON text, parsed again for each reader. */
type Kept = InstanceDigest & { report: string | null }

const recordOf = ({ report, ...digest }: Kept): InstanceRecord => ({
  ...digest,
  report: report === null ? null : (JSON.parse(report) as InstanceReport),
})

/** The fleet's instances, installs and revision over Maps; each call is one synchronous pass. */
export function createFleetStore(revision: FleetRevision = createFleetRevision()): FleetStore {
  const instances = new Map<string, Kept>()
  const installs = new Map<string, FleetInstall>()
  const reported = new Set<string>()
  /** The instance, created unknown as `resourceServer`'s; null when it is another's. */
  const own = (id: string, resourceServer: string, now: number): Kept | null => {
    let kept = instances.get(id)
    if (kept === undefined) {
      kept = {
        id,
        resourceServer,
        lastSeen: now,
        leaseUntil: 0,
        connected: false,
        sequence: null,
        reportedAt: null,
        report: null,
      }
      instances.set(id, kept)
    }
    return kept.resourceServer === resourceServer ? kept : null
  }
  return {
    async claim(id, resourceServer, now) {
      return own(id, resourceServer, now) !== null
    },
    async touch(list, until, now) {
      const connected: string[] = []
      for (const { id, resourceServer } of list) {
        const kept = own(id, resourceServer, now)
        if (kept === null) continue
        kept.leaseUntil = Math.max(kept.leaseUntil, until)
        kept.lastSeen = Math.max(kept.lastSeen, now)
        if (!kept.connected && !connected.includes(id)) connected.push(id)
        kept.connected = true
      }
      return connected
    },
    async release(id, now) {
      const kept = instances.get(id)
      if (kept === undefined) return false
      kept.leaseUntil = Math.min(kept.leaseUntil, now)
      const was = kept.connected
      kept.connected = false
      return was
    },
    async expire(now) {
      const ended: Array<{ id: string; resourceServer: string }> = []
      for (const kept of instances.values()) {
        if (!kept.connected || kept.leaseUntil > now) continue
        kept.connected = false
        ended.push({ id: kept.id, resourceServer: kept.resourceServer })
      }
      return ended.sort(byId)
    },
    async saveReport(id, resourceServer, report, sequence, now) {
      const kept = own(id, resourceServer, now)
      if (kept === null) return 'conflict'
      if (sequence !== null && kept.sequence !== null && sequence <= kept.sequence) return 'stale'
      kept.sequence = sequence ?? (kept.sequence ?? 0) + 1
      kept.report = JSON.stringify(report)
      kept.reportedAt = now
      kept.lastSeen = Math.max(kept.lastSeen, now)
      return 'saved'
    },
    async find(id) {
      const kept = instances.get(id)
      return kept ? recordOf(kept) : null
    },
    async reports(ids) {
      const wanted = new Set(ids)
      return [...instances.values()]
        .filter((kept) => wanted.has(kept.id))
        .map(recordOf)
        .sort(byId)
    },
    async digests() {
      return [...instances.values()].map(({ report: _report, ...digest }) => ({ ...digest })).sort(byId)
    },
    async remove(id) {
      return instances.delete(id)
    },
    async setInstall(entry) {
      installs.set(entry.module, { ...entry })
      revision.value += 1
    },
    async desired() {
      return {
        revision: revision.value,
        prune: revision.prune,
        installs: [...installs.values()].map((entry) => ({ ...entry })).sort(byKey((entry) => entry.module)),
      }
    },
    async revision() {
      return revision.value
    },
    async bump() {
      revision.value += 1
    },
    async setPrune(prune) {
      if (revision.prune === prune) return false
      revision.prune = prune
      revision.value += 1
      return true
    },
    async noteReported(modules) {
      const first: string[] = []
      for (const module of modules) {
        if (reported.has(module)) continue
        reported.add(module)
        first.push(module)
      }
      return first
    },
  }
}
