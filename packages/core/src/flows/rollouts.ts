// Rollouts of snapshots to groups of instances: made (all at once or staged), followed through the
// instances' outcomes to their end, rolled back; each instance's target (what its flows should be)
// worked out once per revision of the desired state; what an instance's flows are now, and their
// drift from what the last rollout deployed.
import { actorOf, type Principal } from '../auth/principal.js'
import { type DomainError, err, invalid, ok, type Result } from '../errors.js'
import type {
  Clock,
  EnrolmentStore,
  EventSink,
  FleetStore,
  FlowsMode,
  InstanceFlows,
  RandomSource,
  RolloutChange,
  RolloutOutcome,
  RolloutRecord,
  RolloutStore,
  RolloutStrategy,
  SnapshotStore,
} from '../ports/index.js'
import { base64url } from '../tokens/encoding.js'
import { type FleetOnce, fleetOnce, type GroupMembership } from './fleet-groups.js'
import {
  type FinishedState,
  groupTarget,
  isFinished,
  previousSnapshot,
  ROLLOUT_ID_FORM,
  reaches,
  stateOf,
  targetOf,
  variablesDigest,
  variablesOf,
} from './rollout-rules.js'
import type { FlowVariables } from './variables.js'

export type RolloutError = Extract<
  DomainError,
  {
    code:
      | 'invalid_request'
      | 'group_not_found'
      | 'snapshot_not_found'
      | 'rollout_not_found'
      | 'no_previous_target'
      | 'not_targeted'
  }
>

export interface RolloutDeps {
  store: RolloutStore
  snapshots: SnapshotStore
  fleet: FleetStore
  /** The enrolled instances' credentials: a revoked instance is reached by no new rollout. */
  enrolments: EnrolmentStore
  membership: GroupMembership
  variables: FlowVariables
  clock: Clock
  random: RandomSource
  events: EventSink
}

/** What an instance's poll says of its flows: the rollout to run, its snapshot, mode and variables. */
export interface FlowsTarget {
  rollout: string
  snapshot: string
  mode: FlowsMode
  /** Changes when the variables a deploy there delivers change. */
  variables: string
}

/** What an instance says of a rollout, or of its flows changed by hand. */
export type FlowsReport =
  | {
      rollout: string
      outcome: 'succeeded' | 'failed'
      rev: string | null
      message: string | null
      missingCredentials: string[]
      restored: boolean
    }
  | { rev: string; by: string | null }

/** A rollout and what its instances did with it; `waiting` those it reached that did not say yet. */
export type RolloutView = RolloutRecord & { outcomes: RolloutOutcome[]; waiting: string[] }

/** Everything a poll's target is worked out from, read once per revision. */
interface Known {
  version: string
  byGroup: Map<string, RolloutRecord[]>
  enforced: Set<string>
}

const MAX_STAGE = 10_000

/** The strategy a request names: absent or `all`, or `staged` with a first stage of 1 or more. */
export function strategyOf(input: unknown): Result<RolloutStrategy, RolloutError> {
  if (input === undefined || input === null) return ok({ kind: 'all' })
  const value = input as { kind?: unknown; first?: unknown }
  if (typeof input === 'object' && value.kind === 'all') return ok({ kind: 'all' })
  if (typeof input === 'object' && value.kind === 'staged') {
    const first = value.first
    if (typeof first === 'number' && Number.isSafeInteger(first) && first >= 1 && first <= MAX_STAGE) {
      return ok({ kind: 'staged', first })
    }
    return err(invalid(`strategy.first must be a whole number from 1 to ${MAX_STAGE}`))
  }
  return err(invalid('strategy must be {"kind":"all"} or {"kind":"staged","first":N}'))
}

const byGroupOf = (rollouts: readonly RolloutRecord[]) => {
  const byGroup = new Map<string, RolloutRecord[]>()
  for (const rollout of [...rollouts].sort((a, b) => b.sequence - a.sequence)) {
    const list = byGroup.get(rollout.group) ?? []
    list.push(rollout)
    byGroup.set(rollout.group, list)
  }
  return byGroup
}

export function createRollouts(deps: RolloutDeps) {
  const { store, clock, events, membership } = deps
  let known: Known | null = null
  let loading: { version: string; promise: Promise<Known> } | null = null

  /** What polls of `version` are answered from: read once however many polls ask at once. */
  function knownAt(version: string): Promise<Known> {
    if (known !== null && known.version === version) return Promise.resolve(known)
    if (loading !== null && loading.version === version) return loading.promise
    const promise = Promise.all([store.list(), store.enforced()]).then(([rollouts, enforced]) => {
      const next = { version, byGroup: byGroupOf(rollouts), enforced: new Set(enforced) }
      known = next
      return next
    })
    loading = { version, promise }
    promise.then(
      () => {
        if (loading?.promise === promise) loading = null
      },
      () => {
        if (loading?.promise === promise) loading = null
      },
    )
    return promise
  }

  /** The group's rollouts, newest first, read now. */
  async function ofGroup(group: string): Promise<RolloutRecord[]> {
    return (await store.list()).filter((rollout) => rollout.group === group).reverse()
  }

  const finished = (rollout: RolloutRecord, change: RolloutChange & { state: FinishedState }) =>
    events.emit({
      type: 'fleet.rollout_finished',
      at: change.updatedAt,
      rollout: rollout.id,
      group: rollout.group,
      state: change.state,
      reason: change.reason,
      username: null,
      clientId: null,
      address: null,
    })

  /**
   * The newest rollout of the rollout's group made after it, or null: a rollout replaced by a
   * newer one only stops (another flowadmin may have moved it on before the newer one stopped it).
   */
  const newerOf = async (rollout: RolloutRecord) =>
    (await ofGroup(rollout.group)).find((other) => other.sequence > rollout.sequence) ?? null

  /**
   * Moves every unfinished rollout on, over one read of the fleet (none when every rollout is
   * finished): see membershipChanged.
   */
  async function settle(): Promise<void> {
    const fleet = fleetOnce(deps)
    for (const rollout of await store.list()) {
      if (!isFinished(rollout.state)) await advance(rollout.id, fleet)
    }
  }

  /**
   * Moves the rollout to the state its outcomes make, or stops it when a newer rollout of its
   * group replaced it: a compare-and-set, tried again from what it is now when another flowadmin
   * changed it meanwhile. The fleet is read only when the rollout is unfinished, at most once for
   * all its attempts (or for every caller sharing `fleet`).
   */
  async function advance(id: string, fleet: FleetOnce = fleetOnce(deps)): Promise<RolloutRecord | null> {
    for (let attempt = 0; attempt < 10; attempt++) {
      const rollout = await store.find(id)
      if (rollout === null || isFinished(rollout.state)) return rollout
      const newer = await newerOf(rollout)
      const next: Omit<RolloutChange, 'updatedAt'> =
        newer === null
          ? stateOf(rollout, await store.outcomes(id), (await fleet())(rollout.group))
          : { state: 'stopped', released: rollout.released, reason: `replaced by rollout ${newer.id}` }
      if (next.state === rollout.state && next.released === rollout.released) return rollout
      const change = { ...next, updatedAt: clock.now() }
      if (await store.update(id, rollout, change)) {
        if (isFinished(change.state)) finished(rollout, { ...change, state: change.state })
        return { ...rollout, ...change }
      }
    }
    return store.find(id)
  }

  /** Makes a rollout of `snapshot` to `group`; an unfinished one of the group is stopped. */
  async function start(
    principal: Principal,
    address: string | null,
    group: string,
    snapshot: string,
    strategy: RolloutStrategy,
    kind: RolloutRecord['kind'],
  ): Promise<Result<RolloutRecord, RolloutError>> {
    if (!membership.has(group)) return err({ code: 'group_not_found', group })
    if ((await deps.snapshots.find(snapshot)) === null)
      return err({ code: 'snapshot_not_found', id: snapshot })
    const instances = [...(await fleetOnce(deps)())(group)].sort()
    const now = clock.now()
    const actor = actorOf(principal, address)
    const id = base64url(deps.random.bytes(12))
    const record = {
      id,
      group,
      snapshot,
      kind,
      strategy,
      instances,
      released: strategy.kind === 'all',
      state: instances.length === 0 ? ('succeeded' as const) : ('pending' as const),
      reason: null,
      createdBy: actor.username,
      createdAt: now,
      updatedAt: now,
    }
    // A staged rollout to no instance is released at once: there is no first stage to wait for.
    if (instances.length === 0) record.released = true
    const sequence = await store.create(record)
    // Every unfinished rollout made before it in the group stops, however it moved meanwhile.
    for (const old of await ofGroup(group)) {
      if (old.sequence < sequence && !isFinished(old.state)) await advance(old.id)
    }
    events.emit({
      type: 'fleet.rollout_started',
      at: now,
      rollout: id,
      group,
      snapshot,
      kind,
      strategy: strategy.kind === 'all' ? 'all' : `staged:${strategy.first}`,
      instances: instances.length,
      ...actor,
    })
    return ok({ ...record, sequence })
  }

  /** The instance's flows as kept, or a fresh record. */
  async function flowsOf(instance: string): Promise<InstanceFlows> {
    const found = (await store.flows()).find((flows) => flows.instance === instance)
    return found ?? { instance, rollout: null, deployedRev: null, rev: null, drift: null, at: clock.now() }
  }

  /**
   * What the poll of `instance` at `version` (the desired state's) says of its flows: read once a
   * revision, since every change of a rollout, mode or variable bumps it. Null: no target.
   */
  async function target(instance: string, version: string): Promise<FlowsTarget | null> {
    const at = await knownAt(version)
    const groups = membership.groupsOf(instance)
    if (groups.length === 0) return null
    const rollout = targetOf(at.byGroup, groups, instance)
    if (rollout === null) return null
    return {
      rollout: rollout.id,
      snapshot: rollout.snapshot,
      mode: at.enforced.has(rollout.group) ? 'enforce' : 'report',
      variables: variablesDigest(variablesOf(await deps.variables.all(version), groups, instance)),
    }
  }

  return {
    start: (
      principal: Principal,
      address: string | null,
      group: string,
      snapshot: string,
      strategy: RolloutStrategy,
    ) => start(principal, address, group, snapshot, strategy, 'rollout'),

    /** Rolls the group back to its previous target's snapshot: a rollout made at once, a rollback. */
    async rollback(
      principal: Principal,
      address: string | null,
      group: string,
    ): Promise<Result<RolloutRecord, RolloutError>> {
      if (!membership.has(group)) return err({ code: 'group_not_found', group })
      const previous = previousSnapshot(await ofGroup(group))
      if (previous === null) return err({ code: 'no_previous_target', group })
      return start(principal, address, group, previous, { kind: 'all' }, 'rollback')
    },

    /** Every rollout, newest first; `groups` keeps those of these groups alone. */
    async list(groups?: ReadonlySet<string>): Promise<RolloutRecord[]> {
      const all = (await store.list()).reverse()
      return groups === undefined ? all : all.filter((rollout) => groups.has(rollout.group))
    },

    /** The rollout with its outcomes and the instances it reached that did not say yet. */
    async find(id: string): Promise<Result<RolloutView, RolloutError>> {
      // Moved on first, should its instances have left meanwhile.
      if (!ROLLOUT_ID_FORM.test(id)) return err({ code: 'rollout_not_found', id })
      const fleet = fleetOnce(deps)
      const rollout = await advance(id, fleet)
      if (rollout === null) return err({ code: 'rollout_not_found', id })
      const outcomes = await store.outcomes(id)
      if (isFinished(rollout.state)) return ok({ ...rollout, outcomes, waiting: [] })
      const members = (await fleet())(rollout.group)
      const said = new Set(outcomes.map((outcome) => outcome.instance))
      const waiting = rollout.instances.filter((i) => reaches(rollout, i) && members.has(i) && !said.has(i))
      return ok({ ...rollout, outcomes, waiting })
    },

    /** The group's flows: its mode, target, what a rollback goes back to, and each instance's flows. */
    async group(group: string) {
      if (!membership.has(group)) return err({ code: 'group_not_found' as const, group })
      const rollouts = await ofGroup(group)
      const enforced = await store.enforced()
      const ids = (await deps.fleet.digests())
        .map((digest) => digest.id)
        .filter((instance) => membership.groupsOf(instance).includes(group))
      const flows = new Map((await store.flows()).map((each) => [each.instance, each]))
      return ok({
        group,
        mode: (enforced.includes(group) ? 'enforce' : 'report') as FlowsMode,
        target: groupTarget(rollouts),
        latest: rollouts[0] ?? null,
        previous: previousSnapshot(rollouts),
        instances: ids.sort().map((instance) => {
          const kept = flows.get(instance)
          return {
            instance,
            rollout: kept?.rollout ?? null,
            deployedRev: kept?.deployedRev ?? null,
            rev: kept?.rev ?? null,
            drift: kept?.drift ?? null,
          }
        }),
      })
    },

    /** Sets the group's mode; audited as `fleet.flows_mode_set` when it changed. */
    async setMode(principal: Principal, address: string | null, group: string, mode: FlowsMode) {
      if (!membership.has(group)) return err({ code: 'group_not_found' as const, group })
      if (await store.setMode(group, mode)) {
        events.emit({
          type: 'fleet.flows_mode_set',
          at: clock.now(),
          group,
          mode,
          ...actorOf(principal, address),
        })
      }
      return ok({ group, mode })
    },

    target,

    /**
     * The settings' groups were reloaded, so instances may be in other groups: the fleet's revision
     * moves (no store change counts it), so their polls answer which rollout their flows should be
     * now, and every unfinished rollout stops waiting for those gone. (An assignment over the API
     * bumps the revision in its own transaction, and calls `settle`.)
     */
    async membershipChanged(): Promise<void> {
      await deps.fleet.bump()
      await settle()
    },

    /**
     * Instances left the fleet (removed, revoked): every unfinished rollout stops waiting for
     * them. Their polls end (or are refused) by themselves; the others' targets stay.
     */
    settle,

    /** What an instance deploys for its target: the snapshot's flows and modules, and its variables opened. */
    async targetFile(instance: string) {
      const version = String(await deps.fleet.revision())
      const wanted = await target(instance, version)
      if (wanted === null) return err({ code: 'no_target' as const, instance })
      const snapshot = await deps.snapshots.find(wanted.snapshot)
      if (snapshot === null) return err({ code: 'no_target' as const, instance })
      const chosen = variablesOf(await deps.variables.all(version), membership.groupsOf(instance), instance)
      return ok({
        ...wanted,
        flows: JSON.parse(snapshot.flows) as unknown[],
        modules: snapshot.modules,
        env: deps.variables.deliver(chosen),
      })
    },

    /**
     * An instance says what it did with a rollout (its outcome, the rev it deployed), or that its
     * flows changed on it (`rev`, `by`): drift from what the rollout deployed, audited as
     * `fleet.flows_drifted` once for each rev.
     */
    async report(instance: string, report: FlowsReport): Promise<Result<void, RolloutError>> {
      const now = clock.now()
      const kept = await flowsOf(instance)
      if ('outcome' in report) {
        const rollout = ROLLOUT_ID_FORM.test(report.rollout) ? await store.find(report.rollout) : null
        if (rollout === null) return err({ code: 'rollout_not_found', id: report.rollout })
        const inGroup =
          rollout.instances.includes(instance) || membership.groupsOf(instance).includes(rollout.group)
        if (!(inGroup && reaches(rollout, instance)) && kept.rollout !== rollout.id)
          return err({ code: 'not_targeted', instance, rollout: rollout.id })
        await store.saveOutcome({
          rollout: rollout.id,
          instance,
          outcome: report.outcome,
          rev: report.rev,
          message: report.message,
          missingCredentials: report.missingCredentials,
          at: now,
        })
        if (report.outcome === 'succeeded') {
          await store.saveFlows({
            instance,
            rollout: rollout.id,
            deployedRev: report.rev,
            rev: report.rev,
            drift: null,
            at: now,
          })
        }
        events.emit({
          type: report.restored ? 'fleet.flows_restored' : 'fleet.rollout_outcome',
          at: now,
          rollout: rollout.id,
          instance,
          outcome: report.outcome,
          rev: report.rev,
          message: report.message,
          missingCredentials: report.missingCredentials,
          username: null,
          clientId: null,
          address: null,
        })
        if (!report.restored) await advance(rollout.id)
        return ok(undefined)
      }
      const drifted = kept.deployedRev !== null && report.rev !== kept.deployedRev
      const drift = drifted
        ? kept.drift?.rev === report.rev
          ? kept.drift
          : { rev: report.rev, by: report.by, at: now }
        : null
      await store.saveFlows({ ...kept, rev: report.rev, drift, at: now })
      if (drift !== null && drift !== kept.drift) {
        events.emit({
          type: 'fleet.flows_drifted',
          at: now,
          instance,
          rollout: kept.rollout,
          rev: report.rev,
          by: report.by,
          username: null,
          clientId: null,
          address: null,
        })
      }
      return ok(undefined)
    },
  }
}

export type Rollouts = ReturnType<typeof createRollouts>
