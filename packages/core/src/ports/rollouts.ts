// Rollouts of snapshots to groups of instances, what each instance did with them, its flows' state
// (the rev it runs, drift), each group's flows mode, and the variables delivered with a deploy.
// Kept durably; every flowadmin sharing the store reads them. Every change an instance's poll must
// see (a new rollout, a stage released, a mode or a variable) bumps the fleet's revision in the
// same transaction, so held polls everywhere wake on it.

/** How a rollout reaches its instances: all at once, or the first `first` before the rest. */
export type RolloutStrategy = { kind: 'all' } | { kind: 'staged'; first: number }

/**
 * `pending`: no instance has reported yet; `running`: some have; `succeeded`: every instance it
 * reaches reported success; `stopped`: a staged rollout's first stage failed, so the rest were
 * never reached (or a newer rollout of the group replaced it before it finished); `failed`: an
 * instance reached at once failed.
 */
export type RolloutState = 'pending' | 'running' | 'succeeded' | 'stopped' | 'failed'

export interface RolloutRecord {
  /** Its public id (16 characters of base64url). */
  id: string
  /** Its place among every rollout made: 1, 2, … (given by the store). */
  sequence: number
  group: string
  /** The snapshot it rolls out. */
  snapshot: string
  /** `rollback` when made by a group's rollback. */
  kind: 'rollout' | 'rollback'
  strategy: RolloutStrategy
  /** The group's instances when it was made, sorted by id; a staged rollout's first stage first. */
  instances: string[]
  /** Whether every instance is reached: made at once, or its first stage succeeded. */
  released: boolean
  state: RolloutState
  /** Why it stopped or failed (the instance and what it said), or null. */
  reason: string | null
  /** Who made it: a username, or null (the command line, or an open API). */
  createdBy: string | null
  createdAt: number
  /** When its state last changed. */
  updatedAt: number
}

/** A rollout to save: everything but the sequence, which the store gives. */
export type NewRollout = Omit<RolloutRecord, 'sequence'>

/** What a rollout's state, `released` and `reason` become, from what they were. */
export interface RolloutChange {
  state: RolloutState
  released: boolean
  reason: string | null
  updatedAt: number
}

/** What an instance did with a rollout. */
export interface RolloutOutcome {
  rollout: string
  instance: string
  outcome: 'succeeded' | 'failed'
  /** The rev of its flows after the deploy (null when it failed before deploying). */
  rev: string | null
  /** What went wrong, or null. */
  message: string | null
  /** Ids of the snapshot's nodes that need credentials the instance does not have. */
  missingCredentials: string[]
  at: number
}

/** What an instance's flows are: the rollout it last deployed, and the rev it runs now. */
export interface InstanceFlows {
  instance: string
  /** The rollout whose flows it deployed last (succeeded), or null. */
  rollout: string | null
  /** The rev that deploy gave, or null. */
  deployedRev: string | null
  /** The rev it last reported running, or null. */
  rev: string | null
  /** When its flows changed on the instance itself (not by a rollout), and who deployed them. */
  drift: { rev: string; by: string | null; at: number } | null
  at: number
}

/** Where a variable is set: for every instance of a group, or for one instance. */
export type VariableScope = { kind: 'group'; group: string } | { kind: 'instance'; instance: string }

/** A variable a deploy delivers (as `${NAME}` in flows). */
export interface FlowVariable {
  scope: VariableScope
  name: string
  /** Its value; for a secret, as the sealer sealed it (opaque to the store). */
  value: string
  secret: boolean
  /** Who set it: a username, or null. */
  by: string | null
  at: number
}

/** Whether a group's instances only report flows changed on them, or have them restored. */
export type FlowsMode = 'report' | 'enforce'

export interface RolloutStore {
  /** Saves a new rollout with the next sequence and bumps the fleet's revision; returns the sequence. */
  create(rollout: NewRollout): Promise<number>
  /**
   * Changes the rollout when its state and `released` are still `from`'s (else false, nothing
   * changes); bumps the fleet's revision when `released` changes or the state becomes `stopped`
   * (both change which instances it reaches).
   */
  update(id: string, from: Pick<RolloutRecord, 'state' | 'released'>, change: RolloutChange): Promise<boolean>
  /** The rollout, or null. */
  find(id: string): Promise<RolloutRecord | null>
  /** Every rollout, by sequence. */
  list(): Promise<RolloutRecord[]>
  /** Saves the instance's outcome of the rollout, in place of an earlier one of both. */
  saveOutcome(outcome: RolloutOutcome): Promise<void>
  /** The rollout's outcomes, sorted by instance. */
  outcomes(rollout: string): Promise<RolloutOutcome[]>
  /** Saves the instance's flows, in place of earlier ones. */
  saveFlows(flows: InstanceFlows): Promise<void>
  /** Every instance's flows, sorted by instance. */
  flows(): Promise<InstanceFlows[]>
  /** Sets the variable (in place of one of the same scope and name) and bumps the fleet's revision. */
  setVariable(variable: FlowVariable): Promise<void>
  /** Deletes it; true (and the revision is bumped) when it was there. */
  deleteVariable(scope: VariableScope, name: string): Promise<boolean>
  /** Every variable, sorted by scope (groups, then instances, by name), then name. */
  variables(): Promise<FlowVariable[]>
  /** Sets a group's mode and bumps the revision; false (nothing changes) when it was that already. */
  setMode(group: string, mode: FlowsMode): Promise<boolean>
  /** The groups whose mode is `enforce`, sorted (every other group's is `report`). */
  enforced(): Promise<string[]>
}

/**
 * Seals the secret variables for the store and opens them for a deploy. The server implements it
 * (AES-256-GCM under a configured key); without a key, secret variables cannot be set.
 */
export interface VariableSealer {
  /** `value` sealed, bound to `context` (the variable's scope and name). */
  seal(context: string, value: string): string
  /** The value sealed for `context`, or null when it does not open (another key or context). */
  open(context: string, sealed: string): string | null
}
