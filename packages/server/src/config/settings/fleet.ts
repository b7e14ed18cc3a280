// `fleet`: fleet mode, where the module routes state the desired modules of Node-RED instances.
import { DEFAULT_HOLD_SECONDS, DEFAULT_MAX_INSTANCES, DEFAULT_SNAPSHOT_MAX_BYTES } from '@flowadmin/core'
import * as v from 'valibot'
import { groups } from './access.js'
import { type FieldProblem, onOff, strictObject, whole } from './fields.js'

/**
 * Fleet mode's settings: drop modules no longer desired (the store keeps the value every flowadmin
 * sharing it acts on), how long a change's answer waits for the outcomes (ms), and how long a poll
 * is held at most (seconds), how many instances each resource server may enrol, and the bound on
 * a snapshot of flows.
 */
export interface FleetSettings {
  prune: boolean
  answerWaitMs: number
  holdSeconds: number
  /** Enrolled instances one resource server may hold. */
  maxInstances: number
  /** The most bytes of a snapshot's file. */
  snapshots: { maxBytes: number }
  /** The key secret flow variables are sealed with (the file's, else FLOWS_KEY_ENV), or null. */
  flowsKey: string | null
}

/** Where the key of secret flow variables comes from when the settings file does not hold it. */
export const FLOWS_KEY_ENV = 'FLOWADMIN_FLOWS_KEY'
/** The fewest characters of that key (it should hold at least 256 random bits). */
export const MIN_FLOWS_KEY_LENGTH = 32

/** The largest bound a snapshot may be given: 50 MiB (an upload's body may be four times that). */
export const MAX_SNAPSHOT_BYTES = 50 * 1024 * 1024

export const fleet = strictObject({
  modules: onOff,
  prune: v.optional(onOff),
  wait: v.optional(whole(0, 60)),
  hold: v.optional(whole(5, 120)),
  maxInstances: v.optional(whole(1, 1_000_000)),
  /** Snapshots of flows: the most bytes of one's file (Node-RED's apiMaxLength, 5 MiB, by default). */
  snapshots: v.optional(strictObject({ maxBytes: v.optional(whole(1024, MAX_SNAPSHOT_BYTES)) })),
  /** Flows across the fleet: the key secret flow variables are sealed with. */
  flows: v.optional(
    strictObject({
      key: v.optional(
        v.pipe(
          v.string(),
          v.minLength(MIN_FLOWS_KEY_LENGTH, `must have at least ${MIN_FLOWS_KEY_LENGTH} characters`),
        ),
      ),
    }),
  ),
  /** Groups of instances by id patterns (see access.ts); they count where the fleet's instances have identities. */
  groups: v.optional(groups),
})

/** Fleet mode's settings, or null when `fleet.modules` is not true. */
export const fleetOf = (
  parsed: v.InferOutput<typeof fleet> | undefined,
  problem: FieldProblem,
): FleetSettings | null =>
  parsed?.modules
    ? {
        prune: parsed.prune ?? false,
        answerWaitMs: (parsed.wait ?? 5) * 1000,
        holdSeconds: parsed.hold ?? DEFAULT_HOLD_SECONDS,
        maxInstances: parsed.maxInstances ?? DEFAULT_MAX_INSTANCES,
        snapshots: { maxBytes: parsed.snapshots?.maxBytes ?? DEFAULT_SNAPSHOT_MAX_BYTES },
        flowsKey: flowsKeyOf(parsed.flows?.key, problem),
      }
    : null

/** The key of secret flow variables: the file's, else the environment's when long enough, else none. */
function flowsKeyOf(key: string | undefined, problem: FieldProblem): string | null {
  if (key !== undefined) return key
  const fromEnv = process.env[FLOWS_KEY_ENV]
  if (fromEnv === undefined || fromEnv === '') return null
  if (fromEnv.length < MIN_FLOWS_KEY_LENGTH)
    throw problem('.flows.key', `${FLOWS_KEY_ENV} must have at least ${MIN_FLOWS_KEY_LENGTH} characters`)
  return fromEnv
}
