// The rules of rollouts, pure: which instances a rollout reaches, what its state is from its
// instances' outcomes, which rollout an instance's flows should be, and what a rollback goes back to.
import type {
  FlowVariable,
  RolloutOutcome,
  RolloutRecord,
  RolloutState,
  VariableScope,
} from '../ports/index.js'

/** What a rollout's id looks like: 12 random bytes in base64url. */
export const ROLLOUT_ID_FORM = /^[A-Za-z0-9_-]{16}$/

/** A variable's name: what `${NAME}` in a flow can name, and an environment variable's form. */
export const VARIABLE_NAME_FORM = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/

/** The longest value a variable may have, in characters. */
export const MAX_VARIABLE_LENGTH = 4096

/** The most variables one group or instance may have. */
export const MAX_VARIABLES = 200

/** A state after which nothing changes. */
export type FinishedState = Exclude<RolloutState, 'pending' | 'running'>

/** Whether nothing changes after `state`. */
export const isFinished = (state: RolloutState): state is FinishedState =>
  state !== 'pending' && state !== 'running'

/** The instances of a rollout's first stage: the first `first` of a staged one, all of one made at once. */
export function firstStage(rollout: Pick<RolloutRecord, 'strategy' | 'instances'>): string[] {
  return rollout.strategy.kind === 'staged'
    ? rollout.instances.slice(0, rollout.strategy.first)
    : [...rollout.instances]
}

/**
 * Whether the rollout is to be the flows of `instance`: one of its instances that it reached (its
 * first stage, or every one once released), or an instance that joined its group later, once it
 * is released and did not stop.
 */
export function reaches(rollout: RolloutRecord, instance: string): boolean {
  if (rollout.instances.includes(instance)) {
    return rollout.released || firstStage(rollout).includes(instance)
  }
  return rollout.released && rollout.state !== 'stopped'
}

/**
 * The rollout's state, `released` and reason, from its instances' outcomes; given `present` (the
 * instances its group holds now), one that left without saying is not waited for, and a rollout
 * whose instances (or first stage) all left so stops.
 */
export function stateOf(
  rollout: RolloutRecord,
  outcomes: readonly RolloutOutcome[],
  present?: ReadonlySet<string>,
): Pick<RolloutRecord, 'state' | 'released' | 'reason'> {
  if (rollout.state === 'stopped') {
    return { state: 'stopped', released: rollout.released, reason: rollout.reason }
  }
  const byInstance = new Map(
    outcomes.filter((outcome) => outcome.rollout === rollout.id).map((o) => [o.instance, o]),
  )
  // An instance that left (removed, revoked, out of the group) before it said is not waited for.
  const stays = (instance: string) =>
    present === undefined || present.has(instance) || byInstance.has(instance)
  const stage = firstStage(rollout).filter(stays)
  const all = rollout.instances.filter(stays)
  const reached = rollout.released ? all : stage
  if (reached.length === 0 && rollout.instances.length > 0) {
    const which = rollout.released ? 'every instance it reached' : 'every instance of its first stage'
    return { state: 'stopped', released: rollout.released, reason: `${which} left before saying` }
  }
  const failed = reached.find((instance) => byInstance.get(instance)?.outcome === 'failed')
  if (failed !== undefined) {
    const message = byInstance.get(failed)?.message
    const why = `${failed} failed${message ? `: ${message}` : ''}`
    return rollout.released
      ? { state: 'failed', released: true, reason: why }
      : { state: 'stopped', released: false, reason: `${why}; the other instances were left as they were` }
  }
  const succeeded = (instance: string) => byInstance.get(instance)?.outcome === 'succeeded'
  if (!rollout.released && stage.every(succeeded)) {
    // The first stage went well: every instance is reached now.
    return all.every(succeeded)
      ? { state: 'succeeded', released: true, reason: null }
      : { state: 'running', released: true, reason: null }
  }
  if (reached.every(succeeded) && rollout.released)
    return { state: 'succeeded', released: true, reason: null }
  const started = reached.some((instance) => byInstance.has(instance))
  return { state: started ? 'running' : 'pending', released: rollout.released, reason: null }
}

/**
 * The rollout `instance`'s flows should be: the newest (greatest sequence) of those of its groups
 * that reach it, or null. `byGroup` holds each group's rollouts, newest first.
 */
export function targetOf(
  byGroup: ReadonlyMap<string, readonly RolloutRecord[]>,
  groups: readonly string[],
  instance: string,
): RolloutRecord | null {
  let best: RolloutRecord | null = null
  for (const group of groups) {
    for (const rollout of byGroup.get(group) ?? []) {
      if (best !== null && rollout.sequence <= best.sequence) break
      if (reaches(rollout, instance)) {
        best = rollout
        break
      }
    }
  }
  return best
}

/** The group's target: its newest rollout that every instance of it, joined later too, gets. */
export function groupTarget(rollouts: readonly RolloutRecord[]): RolloutRecord | null {
  return rollouts.find((rollout) => rollout.released && rollout.state !== 'stopped') ?? null
}

/**
 * The snapshot a rollback of the group goes back to: that of its newest rollout before its latest
 * one whose snapshot differs from the latest one's. `rollouts` newest first. Null when none.
 */
export function previousSnapshot(rollouts: readonly RolloutRecord[]): string | null {
  const [latest, ...earlier] = rollouts
  if (latest === undefined) return null
  return earlier.find((rollout) => rollout.snapshot !== latest.snapshot)?.snapshot ?? null
}

/** A scope as one key: `group:<name>` or `instance:<id>` (the context secrets are sealed for). */
export const scopeKey = (scope: VariableScope): string =>
  scope.kind === 'group' ? `group:${scope.group}` : `instance:${scope.instance}`

/**
 * The variables a deploy on `instance` delivers: those of its groups (in the order of their names,
 * a later one's replacing an earlier one's of the same name), then its own, which replace any.
 */
export function variablesOf(
  variables: readonly FlowVariable[],
  groups: readonly string[],
  instance: string,
): FlowVariable[] {
  const chosen = new Map<string, FlowVariable>()
  const order = [...groups].sort()
  for (const group of order) {
    for (const variable of variables) {
      if (variable.scope.kind === 'group' && variable.scope.group === group)
        chosen.set(variable.name, variable)
    }
  }
  for (const variable of variables) {
    if (variable.scope.kind === 'instance' && variable.scope.instance === instance)
      chosen.set(variable.name, variable)
  }
  return [...chosen.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/**
 * A short digest of the variables a deploy delivers (64-bit FNV-1a, in hex) of what changes when
 * one is set: its scope, name, secrecy, when it was set and its value's length (not the value: a
 * poll answer computes it, and values are long), so an instance deploys again. It only tells
 * versions apart; it protects nothing.
 */
export function variablesDigest(variables: readonly FlowVariable[]): string {
  if (variables.length === 0) return '0'
  const text = JSON.stringify(
    variables.map((v) => [scopeKey(v.scope), v.name, v.secret, v.at, v.value.length]),
  )
  let hash = 0xcbf29ce484222325n
  for (let i = 0; i < text.length; i++) {
    hash ^= BigInt(text.charCodeAt(i))
    hash = (hash * 0x100000001b3n) & 0xffffffffffffffffn
  }
  return hash.toString(16).padStart(16, '0')
}
