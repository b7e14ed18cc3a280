// `auditLog` and `auditTrail`: where audit lines are written, how long the trail keeps events, and
// how fast each reporter may add them.
import * as path from 'node:path'
import {
  DEFAULT_REPORTED_PER_MINUTE,
  DEFAULT_TRAIL_RETENTION,
  type TrailBounds,
  type TrailOptions,
} from '@flowadmin/core'
import * as v from 'valibot'
import { strictObject, text, whole } from './fields.js'

const DAY_MS = 86_400_000

/** `auditTrail` as the server uses it. */
export interface AuditTrailSettings {
  /** How long flowadmin's own events are kept, and how many at most (the first received go first). */
  maxAgeDays: number
  maxEvents: number
  /** The same for each reporter's events, each reporter apart, and how many it may add a minute. */
  reported: { maxAgeDays: number; maxEvents: number; eventsPerMinute: number }
}

const daysOf = (bounds: TrailBounds) => ({
  maxAgeDays: (bounds.maxAgeMs ?? 0) / DAY_MS,
  maxEvents: bounds.maxEvents ?? 0,
})

/** The core's defaults, in the settings' units. */
export const DEFAULT_AUDIT_TRAIL: AuditTrailSettings = {
  ...daysOf(DEFAULT_TRAIL_RETENTION.own),
  reported: { ...daysOf(DEFAULT_TRAIL_RETENTION.reported), eventsPerMinute: DEFAULT_REPORTED_PER_MINUTE },
}

export const auditLog = v.union(
  [v.picklist(['stdout', 'off']), strictObject({ file: text('a file path') })],
  'must be "stdout", "off" or {"file": "<path>"}',
)

export const auditTrail = strictObject({
  maxAgeDays: v.optional(whole(1, 36_500)),
  maxEvents: v.optional(whole(1000, 1_000_000_000)),
  reported: v.optional(
    strictObject({
      maxAgeDays: v.optional(whole(1, 36_500)),
      maxEvents: v.optional(whole(1000, 1_000_000_000)),
      eventsPerMinute: v.optional(whole(1, 1_000_000)),
    }),
  ),
})

/** `auditTrail` with its defaults. */
export const auditTrailOf = (parsed: v.InferOutput<typeof auditTrail> | undefined): AuditTrailSettings => ({
  ...DEFAULT_AUDIT_TRAIL,
  ...parsed,
  reported: { ...DEFAULT_AUDIT_TRAIL.reported, ...parsed?.reported },
})

/** `auditTrail` as the core's options. */
export const trailOptionsOf = (settings: AuditTrailSettings): TrailOptions => ({
  retention: {
    own: { maxAgeMs: settings.maxAgeDays * DAY_MS, maxEvents: settings.maxEvents },
    reported: { maxAgeMs: settings.reported.maxAgeDays * DAY_MS, maxEvents: settings.reported.maxEvents },
  },
  reportedPerMinute: settings.reported.eventsPerMinute,
})

/** `auditLog` with its default; a file's path made absolute against `baseDir`. */
export const auditLogOf = (
  parsed: v.InferOutput<typeof auditLog> | undefined,
  baseDir: string,
): 'stdout' | 'off' | { file: string } =>
  typeof parsed === 'object' ? { file: path.resolve(baseDir, parsed.file) } : (parsed ?? 'stdout')
