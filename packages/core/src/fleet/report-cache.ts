import type { FleetStore, InstanceDigest, InstanceRecord } from '../ports/index.js'

/** A report as read: parsed once per (instance, sequence, arrival). */
const keyOf = (digest: InstanceDigest) => `${digest.sequence}/${digest.reportedAt}`

/**
 * Every instance with its latest report, kept in memory: each look reads the instances' digests
 * (no report), and only the reports that changed since. Looks made while one reads wait for the
 * next read (which starts once that one ends), so none answers with what was read before it asked.
 */
export function createReportCache(fleet: FleetStore) {
  const reports = new Map<string, { key: string; record: InstanceRecord }>()
  let running: Promise<InstanceRecord[]> | null = null
  let next: Promise<InstanceRecord[]> | null = null

  async function read(): Promise<InstanceRecord[]> {
    const digests = await fleet.digests()
    const changed = digests.filter((digest) => reports.get(digest.id)?.key !== keyOf(digest))
    const fresh = new Map(
      (await fleet.reports(changed.map((digest) => digest.id))).map((record) => [record.id, record]),
    )
    const alive = new Set(digests.map((digest) => digest.id))
    for (const id of reports.keys()) if (!alive.has(id)) reports.delete(id)
    const records: InstanceRecord[] = []
    for (const digest of digests) {
      const found = fresh.get(digest.id)
      // Read between the two reads: its newer report is the one kept, its digest as read with it.
      if (found !== undefined) reports.set(digest.id, { key: keyOf(found), record: found })
      const kept = reports.get(digest.id)
      records.push({ ...digest, ...(found ?? {}), report: kept?.record.report ?? null })
    }
    return records
  }

  /** Every instance (sorted by id) with its latest report, as of this call or later. */
  function refresh(): Promise<InstanceRecord[]> {
    if (running === null) {
      running = read().finally(() => {
        running = null
      })
      return running
    }
    const after = () => {
      next = null
      return refresh()
    }
    next ??= running.then(after, after)
    return next
  }

  return {
    refresh,
    /** Forgets an instance's report (it was removed here). */
    forget(id: string) {
      reports.delete(id)
    },
  }
}
