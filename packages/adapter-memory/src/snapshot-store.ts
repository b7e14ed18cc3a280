import type { SnapshotMeta, SnapshotRecord, SnapshotStore } from '@flowadmin/core'

const copy = (record: SnapshotRecord): SnapshotRecord => ({
  ...record,
  modules: record.modules.map((module) => ({ ...module })),
})

const byNameThenVersion = (a: SnapshotMeta, b: SnapshotMeta) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : a.version - b.version

/** The snapshots of flows over a Map; each call is one synchronous pass. */
export function createSnapshotStore(): SnapshotStore {
  const snapshots = new Map<string, SnapshotRecord>()
  return {
    async create(snapshot) {
      let version = 1
      for (const each of snapshots.values()) {
        if (each.name === snapshot.name && each.version >= version) version = each.version + 1
      }
      snapshots.set(snapshot.id, copy({ ...snapshot, version }))
      return version
    },
    async find(id) {
      const found = snapshots.get(id)
      return found === undefined ? null : copy(found)
    },
    async list() {
      return [...snapshots.values()].sort(byNameThenVersion).map(({ flows: _flows, ...meta }) => ({
        ...meta,
        modules: meta.modules.map((module) => ({ ...module })),
      }))
    },
  }
}
