// The flows' part of the API the console calls: snapshots of flows, rollouts of them to groups,
// each group's flows and mode, and flow variables.
import { blobOf, json, jsonBody, succeed } from './api.js'

/** A snapshot's metadata, as `GET /fleet/snapshots` lists it. */
export interface Snapshot {
  id: string
  name: string
  version: number
  modules: Array<{ name: string; version: string }>
  nodes: number
  bytes: number
  createdBy: string | null
  createdAt: string
}

/** A snapshot just made: with the types no module is known to provide. */
export type CreatedSnapshot = Snapshot & { unknownTypes: string[] }

export type RolloutState = 'pending' | 'running' | 'succeeded' | 'stopped' | 'failed'

export type Strategy = { kind: 'all' } | { kind: 'staged'; first: number }

/** A rollout of a snapshot to a group, as `GET /fleet/rollouts` lists it. */
export interface Rollout {
  id: string
  sequence: number
  group: string
  snapshot: string
  kind: 'rollout' | 'rollback'
  strategy: Strategy
  instances: string[]
  released: boolean
  state: RolloutState
  reason: string | null
  createdBy: string | null
  createdAt: string
  updatedAt: string
}

/** What an instance said of a rollout. */
export interface Outcome {
  instance: string
  outcome: 'succeeded' | 'failed'
  rev: string | null
  message: string | null
  missingCredentials: string[]
  at: string
}

/** A rollout with its instances' outcomes and those it reached that have not said yet. */
export type RolloutView = Rollout & { outcomes: Outcome[]; waiting: string[] }

export type FlowsMode = 'report' | 'enforce'

/** A group's flows, as `GET /fleet/groups/{group}/flows` gives them. */
export interface GroupFlows {
  group: string
  mode: FlowsMode
  target: Rollout | null
  latest: Rollout | null
  /** The snapshot a rollback goes back to. */
  previous: string | null
  instances: Array<{
    instance: string
    rollout: string | null
    deployedRev: string | null
    rev: string | null
    drift: { rev: string; by: string | null; at: string } | null
  }>
}

/** A flow variable; a secret's value is never shown (null). */
export interface Variable {
  name: string
  value: string | null
  secret: boolean
  by: string | null
  at: string
}

/** Whether a rollout may still change: its instances have not all said. */
export const unfinished = (rollout: Rollout): boolean =>
  rollout.state === 'pending' || rollout.state === 'running'

/** Every snapshot's metadata, by name then version (needs `flows.read` on flowadmin). */
export const listSnapshots = (): Promise<Snapshot[]> => json('fleet/snapshots')

/** A snapshot's file, as an upload takes it (needs `flows.read` on flowadmin). */
export const downloadSnapshot = (id: string): Promise<Blob> =>
  blobOf(`fleet/snapshots/${encodeURIComponent(id)}`)

/** Makes a snapshot of a file's JSON, sent as it is (needs `flows.write` on flowadmin). */
export const uploadSnapshot = (file: string): Promise<CreatedSnapshot> =>
  json('fleet/snapshots', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: file })

/** Every rollout the caller may read, newest first. */
export const listRollouts = (): Promise<Rollout[]> => json('fleet/rollouts')

/** A rollout with its outcomes. */
export const getRollout = (id: string): Promise<RolloutView> =>
  json(`fleet/rollouts/${encodeURIComponent(id)}`)

const groupPath = (group: string) => `fleet/groups/${encodeURIComponent(group)}`

/** Rolls `snapshot` out to `group` (needs `flows.write` on the group). */
export const startRollout = (group: string, snapshot: string, strategy: Strategy): Promise<Rollout> =>
  json(`${groupPath(group)}/rollouts`, { method: 'POST', ...jsonBody({ snapshot, strategy }) })

/** Rolls `group` back to the snapshot before its latest (needs `flows.write` on the group). */
export const rollBack = (group: string): Promise<Rollout> =>
  json(`${groupPath(group)}/rollback`, { method: 'POST' })

/** The group's mode, target and each instance's flows (needs `flows.read` on the group). */
export const groupFlows = (group: string): Promise<GroupFlows> => json(`${groupPath(group)}/flows`)

/** Reports or enforces the group's flows (needs `flows.write` on the group). */
export const setMode = (group: string, mode: FlowsMode): Promise<{ mode: FlowsMode }> =>
  json(`${groupPath(group)}/flows/mode`, { method: 'PUT', ...jsonBody({ mode }) })

const variablePath = (group: string, name: string) =>
  `${groupPath(group)}/variables/${encodeURIComponent(name)}`

/** The group's flow variables, by name (needs `flows.read` on the group). */
export const listVariables = (group: string): Promise<Variable[]> => json(`${groupPath(group)}/variables`)

/** Sets a flow variable of the group (needs `flows.write` on the group). */
export const setVariable = (group: string, name: string, value: string, secret: boolean): Promise<Variable> =>
  json(variablePath(group, name), { method: 'PUT', ...jsonBody({ value, secret }) })

/** Removes a flow variable of the group (needs `flows.write` on the group). */
export const removeVariable = (group: string, name: string): Promise<void> =>
  succeed(variablePath(group, name), { method: 'DELETE' })
