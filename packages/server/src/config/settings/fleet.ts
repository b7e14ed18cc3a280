// `fleet`: fleet mode, where the module routes state the desired modules of Node-RED instances.
import * as v from 'valibot'
import { onOff, strictObject, whole } from './fields.js'

/** Fleet mode's settings: drop modules no longer desired, and how long a poll is held (ms). */
export interface FleetSettings {
  prune: boolean
  answerWaitMs: number
}

export const fleet = strictObject({
  modules: onOff,
  prune: v.optional(onOff),
  wait: v.optional(whole(0, 60)),
})

/** Fleet mode's settings, or null when `fleet.modules` is not true. */
export const fleetOf = (parsed: v.InferOutput<typeof fleet> | undefined): FleetSettings | null =>
  parsed?.modules ? { prune: parsed.prune ?? false, answerWaitMs: (parsed.wait ?? 5) * 1000 } : null
