// The instances' leases as their polls come and go: a poll's start is noted in a batch written
// within FLUSH_MS (one store write for every poll that started meanwhile), and a poll whose
// connection closed before its answer ends the lease at once, unless another poll of the same
// instance is held here. An instance that says it leaves ends its lease at once, held poll or not.

/** What the batch writes to: the core's leases (see createLeases). */
export interface LeaseWriter {
  touch(instances: ReadonlyArray<{ id: string; resourceServer: string }>): Promise<void>
  release(id: string, resourceServer: string): Promise<void>
}

export interface FleetLeases {
  /** A poll of this instance started. */
  started(id: string, resourceServer: string): void
  /** A poll of this instance ended; `lost`: its connection closed before its answer. Never rejects. */
  ended(id: string, resourceServer: string, lost: boolean): Promise<void>
  /**
   * The instance is about to be forgotten: a lease of it waiting to be written is dropped (or, being
   * written, done first), so that no poll that came before brings it back. Never rejects.
   */
  forget(id: string): Promise<void>
  /** The instance says it leaves (its Node-RED stops): its lease ends now. Never rejects. */
  left(id: string, resourceServer: string): Promise<void>
  /** Polls held now, of how many instances. */
  held(): number
  /** Stops writing; what waits is dropped. */
  close(): void
}

const DONE = Promise.resolve()

/** Milliseconds a poll's start waits, at most, for its lease to be written with others. */
export const FLUSH_MS = 250

export function createFleetLeases(writer: LeaseWriter, flushMs = FLUSH_MS): FleetLeases {
  const polls = new Map<string, number>()
  let batch = new Map<string, string>()
  let timer: ReturnType<typeof setTimeout> | null = null
  /** The batch being written, and when it is done. */
  let writing: { ids: ReadonlySet<string>; done: Promise<void> } | null = null
  let closed = false

  const schedule = () => {
    if (timer !== null || closed || batch.size === 0) return
    timer = setTimeout(flush, flushMs)
    ;(timer as { unref?: () => void }).unref?.()
  }
  function flush() {
    timer = null
    if (batch.size === 0) return
    if (writing !== null) {
      // One write at a time: this batch goes once the one running is done.
      void writing.done.then(schedule)
      return
    }
    const entries = [...batch]
    batch = new Map()
    const done = writer
      .touch(entries.map(([id, resourceServer]) => ({ id, resourceServer })))
      .catch(() => {
        // The store failed (or is away): the lease is taken again with the next batch.
        for (const [id, resourceServer] of entries) if (!batch.has(id)) batch.set(id, resourceServer)
      })
      .finally(() => {
        writing = null
        schedule()
      })
    writing = { ids: new Set(entries.map(([id]) => id)), done }
  }

  /** The lost poll's instance is released, unless a new poll of it came meanwhile. */
  async function release(id: string, resourceServer: string): Promise<void> {
    batch.delete(id)
    // A lease being written now would outlast the release: released after it.
    if (writing?.ids.has(id)) await writing.done
    // A new poll of it came meanwhile: it is back.
    if (polls.has(id)) return
    await writer.release(id, resourceServer).catch(() => {})
  }

  return {
    started(id, resourceServer) {
      polls.set(id, (polls.get(id) ?? 0) + 1)
      batch.set(id, resourceServer)
      schedule()
    },
    ended(id, resourceServer, lost) {
      const left = (polls.get(id) ?? 1) - 1
      if (left > 0) polls.set(id, left)
      else polls.delete(id)
      // The usual end of a poll (answered) costs no promise of its own.
      if (!lost || left > 0 || closed) return DONE
      return release(id, resourceServer)
    },
    async forget(id) {
      batch.delete(id)
      if (writing?.ids.has(id)) await writing.done
    },
    async left(id, resourceServer) {
      if (closed) return
      batch.delete(id)
      if (writing?.ids.has(id)) await writing.done
      // Its held poll, if any, is cut when its process ends: ended() then releases nothing more.
      await writer.release(id, resourceServer).catch(() => {})
    },
    held: () => polls.size,
    close() {
      closed = true
      if (timer !== null) clearTimeout(timer)
      timer = null
      batch.clear()
    },
  }
}
