import type { InstanceView } from '@flowadmin/core'
import * as v from 'valibot'
import { NullableTime, Time } from './schemas.js'

// What fleet mode's routes read and show: an instance's report, the desired state, the
// instances with their drift.

/** An instance's id, as its helper names it. */
export const INSTANCE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/
/**
 * Well-formed text without control characters: a lone surrogate or a NUL cannot be stored (as
 * PostgreSQL's jsonb refuses `\u0000`), and a control character would forge lines where it is shown.
 */
const TEXT = /^[^\p{Cc}\p{Cs}]*$/u
const text = (max: number, min = 0) =>
  v.pipe(
    v.string(),
    v.minLength(min),
    v.maxLength(max),
    v.regex(TEXT, 'must be well-formed text without control characters'),
  )
const Name = text(214, 1)
const Short = text(64)
const Message = text(1000)
const Type = text(214)

/** What an instance reports of itself (`POST /fleet/instances/{id}/report`). */
export const InstanceReportSchema = v.pipe(
  v.strictObject({
    nodeRedVersion: Short,
    modules: v.pipe(
      v.array(
        v.strictObject({
          name: Name,
          version: Short,
          sets: v.pipe(
            v.array(
              v.strictObject({
                name: Name,
                types: v.pipe(v.array(Type), v.maxLength(1000)),
                enabled: v.boolean(),
                loaded: v.boolean(),
                err: v.optional(Message),
              }),
            ),
            v.maxLength(200),
          ),
        }),
      ),
      v.maxLength(2000),
    ),
    typesInUse: v.pipe(v.array(Type), v.maxLength(10000)),
    applied: v.nullable(Short),
    failures: v.pipe(
      v.array(
        v.strictObject({
          module: Name,
          action: v.picklist(['enable', 'disable', 'install', 'remove']),
          message: Message,
        }),
      ),
      v.maxLength(2000),
    ),
  }),
  v.metadata({ ref: 'InstanceReport' }),
)

export const DesiredStateSchema = v.pipe(
  v.strictObject({
    version: v.string(),
    prune: v.boolean(),
    modules: v.array(
      v.strictObject({
        name: v.string(),
        sets: v.array(v.strictObject({ name: v.string(), enabled: v.boolean() })),
      }),
    ),
    installs: v.array(v.strictObject({ module: v.string(), version: v.nullable(v.string()) })),
    removals: v.array(v.string()),
  }),
  v.metadata({ ref: 'FleetDesiredState' }),
)

/** Where an instance differs from the desired state. */
export const DriftSchema = v.pipe(
  v.strictObject({
    module: v.string(),
    reason: v.picklist(['pending', 'refused', 'install_failed', 'remove_failed', 'installed_by_hand']),
    message: v.optional(v.pipe(v.string(), v.description('Node-RED’s or npm’s own message.'))),
  }),
  v.metadata({ ref: 'FleetDrift' }),
)

export const InstanceSchema = v.pipe(
  v.strictObject({
    id: v.string(),
    resourceServer: v.string(),
    nodeRedVersion: v.nullable(v.string()),
    connected: v.pipe(v.boolean(), v.description('In touch within the last 40 seconds.')),
    lastSeen: Time,
    lastReport: NullableTime('When its last report arrived; null before the first.'),
    applied: v.nullable(v.pipe(v.string(), v.description('The desired state’s version it last applied.'))),
    modules: v.pipe(v.number(), v.description('How many node modules it reports.')),
    drift: v.array(DriftSchema),
  }),
  v.metadata({ ref: 'FleetInstance' }),
)

/** An instance as the API shows it. */
export const instanceJson = (view: InstanceView) => ({
  ...view,
  lastSeen: new Date(view.lastSeen).toISOString(),
  lastReport: view.lastReport === null ? null : new Date(view.lastReport).toISOString(),
})
