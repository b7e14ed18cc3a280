// The trail store: flowadmin's own audit events and those its instances report, in one place.
// Times are milliseconds since the Unix epoch, always passed in: adapters never read a clock.

/** How an event ended. */
export type TrailOutcome = 'success' | 'failure'

/** One event as it is appended. */
export interface TrailEntry {
  /**
   * When it happened, as its source claims (flowadmin's clock for its own events): reported data,
   * searched by `since` and `until`, but never the order of the trail or what retention keeps.
   */
  time: number
  /**
   * When flowadmin took it, by flowadmin's clock (for its own events, their time): what the age
   * bound goes by; searched by `receivedSince` and `receivedUntil`.
   */
  received: number
  /**
   * Whose budget it counts in: null for flowadmin's own events; else the reporter whose report
   * brought it (the resource server's id, until instances have identities of their own). The
   * count and age bounds apply to each reporter apart, and to flowadmin's own events apart.
   */
  reporter: string | null
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
  /** Claimed at or after, in ms. */
  since?: number | undefined
  /** Claimed before, in ms. */
  until?: number | undefined
  /** Received at or after, in ms. */
  receivedSince?: number | undefined
  /** Received before, in ms. */
  receivedUntil?: number | undefined
}

/**
 * What a reporter's batch costs of its allowance, a generic cell rate: each reporter has a time
 * up to which its allowance is spent (none yet: now), and a batch moves it on by `costMs`; it may
 * run at most `burstMs` ahead of now. `costMs` is at most `burstMs`.
 */
export interface TrailPace {
  costMs: number
  burstMs: number
}

/** Whether a reporter's batch was appended, or else when it would fit its allowance. */
export type ReportAdmission = { appended: true } | { appended: false; retryAt: number }

export interface TrailStore {
  /** Appends every entry of the batch, or none (atomically). */
  append(entries: readonly TrailEntry[]): Promise<void>
  /**
   * Appends a batch of `reporter` (the reporter of each of its entries) if its allowance takes
   * `pace.costMs` more at `now`, atomically across every process that shares the store: its spent
   * time moves from `max(spent, now)` to `max(spent, now) + costMs` and the batch is appended
   * when that is at most `now + burstMs`; otherwise nothing changes, and `retryAt` is the moment
   * it would be (`max(spent, now) + costMs - burstMs`).
   */
  appendReport(
    reporter: string,
    entries: readonly TrailEntry[],
    pace: TrailPace,
    now: number,
  ): Promise<ReportAdmission>
  /** Every reporter whose events were ever appended (by either method), each once, in no order. */
  reporters(): Promise<string[]>
  /**
   * Up to `limit` events matching `filter`, newest first (the last the store took first, by
   * seq), starting after `after` when given (strictly older in that order).
   */
  search(filter: TrailFilter, limit: number, after: TrailPosition | null): Promise<TrailEvent[]>
  /**
   * Deletes up to `limit` events of `reporter` (null: flowadmin's own) received before `before`,
   * the first received first; returns how many. Other reporters' events stay, whatever their count.
   */
  deleteBefore(reporter: string | null, before: number, limit: number): Promise<number>
  /**
   * Deletes up to `limit` events of `reporter` (null: flowadmin's own), the first received first
   * (ties: the first taken), beyond the `keep` received last, whatever time they claim; returns
   * how many. Other reporters' events stay, whatever their count.
   */
  deleteBeyond(reporter: string | null, keep: number, limit: number): Promise<number>
}
