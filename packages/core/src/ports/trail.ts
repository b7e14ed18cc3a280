// The trail store: flowadmin's own audit events and those its instances report, in one place.
// Times are milliseconds since the Unix epoch, always passed in: adapters never read a clock.

/** How an event ended. */
export type TrailOutcome = 'success' | 'failure'

/** One event as it is appended. */
export interface TrailEntry {
  /**
   * When it happened, as its source says (flowadmin's clock for its own events): reported data,
   * searched by `since` and `until`, but never the order of the trail or what retention keeps.
   */
  time: number
  /** The resource server whose credentials delivered it; null: flowadmin's own event. */
  server: string | null
  /** Which instance of that resource server reported it; null for flowadmin's own. */
  instance: string | null
  /** The person or client acting, as flowadmin knows them; null when nobody is known. */
  actor: string | null
  /** What happened, dotted, e.g. `flows.set` or `login.failed`. */
  event: string
  outcome: TrailOutcome
  /** The client's address, or null. */
  address: string | null
  /** True when the instance reported the address (unverified); false when flowadmin saw it. */
  addressReported: boolean
  /** The rest of the event: never a password or a token. */
  details: Record<string, unknown>
}

/** One stored event: an entry and its place in the store. */
export interface TrailEvent extends TrailEntry {
  /** Ascending in the order the store took events in: the trail's order, newest first. */
  seq: number
}

/** Where a page of a search ends: the next page starts after (taken before) this event. */
export interface TrailPosition {
  seq: number
}

/** What a search matches; every field given must hold. */
export interface TrailFilter {
  /** Events of one source: flowadmin's own (`server: null`), a resource server's, or one instance's. */
  source?: { server: string | null; instance?: string | undefined } | undefined
  actor?: string | undefined
  /** Events whose name starts with this. */
  eventPrefix?: string | undefined
  outcome?: TrailOutcome | undefined
  /** At or after, in ms. */
  since?: number | undefined
  /** Before, in ms. */
  until?: number | undefined
}

export interface TrailStore {
  /** Appends every entry of the batch, or none (atomically). */
  append(entries: readonly TrailEntry[]): Promise<void>
  /**
   * Up to `limit` events matching `filter`, newest first (the last the store took first, by
   * seq), starting after `after` when given (strictly older in that order).
   */
  search(filter: TrailFilter, limit: number, after: TrailPosition | null): Promise<TrailEvent[]>
  /** Deletes up to `limit` events whose time is before `before`, oldest taken first; returns how many. */
  deleteBefore(before: number, limit: number): Promise<number>
  /**
   * Deletes up to `limit` of the events taken first beyond the `keep` taken last, whatever their
   * time says; returns how many.
   */
  deleteBeyond(keep: number, limit: number): Promise<number>
}
