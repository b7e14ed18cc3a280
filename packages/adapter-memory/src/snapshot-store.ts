import type { SnapshotAsk, SnapshotMeta, SnapshotRecord, SnapshotStore } from '@flowadmin/core'

const copy = (record: SnapshotRecord): SnapshotRecord => ({
  ...record,
  modules: record.modules.map((module) => ({ ...module })),
})

const byNameThenVersion = (a: SnapshotMeta, b: SnapshotMeta) =>
  a.name < b.name ? -1 : a.name > b.name ? 1 : a.version - b.version

/** The snapshots of flows over a Map; each call is one synchronous pass. */
export function createSnapshotStore(): SnapshotStore {
  const snapshots = new Map<string, SnapshotRecord>()
  const asks = new Map<string, SnapshotAsk>()
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
    async ask(ask) {
      asks.set(ask.instance, { ...ask })
    },
    async asked(instance) {
      const found = asks.get(instance)
      return found === undefined ? null : { ...found }
    },
    async take(instance, name) {
      const found = asks.get(instance)
      if (found === undefined || found.name !== name) return null
      asks.delete(instance)
      return found
    },
  }
}
