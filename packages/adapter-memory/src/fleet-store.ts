import type { FleetInstall, FleetStore, InstanceRecord } from '@flowadmin/core'

// Records are copied in and out (reports are plain JSON data).
const copy = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T
const byKey =
  <T>(key: (value: T) => string) =>
  (a: T, b: T) =>
    key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0

/** The fleet's instances and installs over Maps. */
export function createFleetStore(): FleetStore {
  const instances = new Map<string, InstanceRecord>()
  const installs = new Map<string, FleetInstall>()
  return {
    async seen(id, resourceServer, now) {
      const known = instances.get(id)
      if (known !== undefined && known.resourceServer !== resourceServer) return null
      const record: InstanceRecord = known
        ? { ...known, seenAt: now }
        : { id, resourceServer, seenAt: now, reportedAt: null, report: null }
      instances.set(id, record)
      return copy(record)
    },
    async saveReport(id, resourceServer, report, now) {
      const known = instances.get(id)
      if (known !== undefined && known.resourceServer !== resourceServer) return false
      instances.set(id, { id, resourceServer, seenAt: now, reportedAt: now, report: copy(report) })
      return true
    },
    async find(id) {
      const record = instances.get(id)
      return record ? copy(record) : null
    },
    async list() {
      return [...instances.values()].map(copy).sort(byKey((record) => record.id))
    },
    async remove(id) {
      return instances.delete(id)
    },
    async setInstall(entry) {
      installs.set(entry.module, { ...entry })
    },
    async installs() {
      return [...installs.values()].map((entry) => ({ ...entry })).sort(byKey((entry) => entry.module))
    },
  }
}
