// `auditLog` and `auditTrail`: where audit lines are written, and how long the trail keeps events.
import * as path from 'node:path'
import * as v from 'valibot'
import { strictObject, text, whole } from './fields.js'

/** The trail keeps events for 90 days, and 10 million at most. */
export const DEFAULT_AUDIT_TRAIL = { maxAgeDays: 90, maxEvents: 10_000_000 }

export const auditLog = v.union(
  [v.picklist(['stdout', 'off']), strictObject({ file: text('a file path') })],
  'must be "stdout", "off" or {"file": "<path>"}',
)

export const auditTrail = strictObject({
  maxAgeDays: v.optional(whole(1, 36_500)),
  maxEvents: v.optional(whole(1000, 1_000_000_000)),
})

/** `auditLog` with its default; a file's path made absolute against `baseDir`. */
export const auditLogOf = (
  parsed: v.InferOutput<typeof auditLog> | undefined,
  baseDir: string,
): 'stdout' | 'off' | { file: string } =>
  typeof parsed === 'object' ? { file: path.resolve(baseDir, parsed.file) } : (parsed ?? 'stdout')
