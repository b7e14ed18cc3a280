import type {
  FlowsMode,
  FlowVariable,
  InstanceFlows,
  RolloutOutcome,
  RolloutRecord,
  RolloutStore,
  VariableScope,
} from '@flowadmin/core'
import { createFleetRevision, type FleetRevision } from './fleet-revision.js'

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

const copyRollout = (rollout: RolloutRecord): RolloutRecord => ({
  ...rollout,
  strategy: { ...rollout.strategy },
  instances: [...rollout.instances],
})
const copyOutcome = (outcome: RolloutOutcome): RolloutOutcome => ({
  ...outcome,
  missingCredentials: [...outcome.missingCredentials],
})
const copyFlows = (flows: InstanceFlows): InstanceFlows => ({
  ...flows,
  drift: flows.drift === null ? null : { ...flows.drift },
})
const copyVariable = (variable: FlowVariable): FlowVariable => ({ ...variable, scope: { ...variable.scope } })

/** A scope's kind (groups first) and name, as one key. */
const scopeKey = (scope: VariableScope): [number, string] =>
  scope.kind === 'group' ? [0, scope.group] : [1, scope.instance]
const variableKey = (scope: VariableScope, name: string) => JSON.stringify([...scopeKey(scope), name])
const byScopeThenName = (a: FlowVariable, b: FlowVariable) => {
  const [kindA, ownerA] = scopeKey(a.scope)
  const [kindB, ownerB] = scopeKey(b.scope)
  return kindA - kindB || compare(ownerA, ownerB) || compare(a.name, b.name)
}

/**
 * The rollouts, outcomes, instances' flows, variables and modes over Maps; each call is one
 * synchronous pass. Its changes an instance's poll must see bump `revision`, the fleet store's.
 */
export function createRolloutStore(revision: FleetRevision = createFleetRevision()): RolloutStore {
  const rollouts = new Map<string, RolloutRecord>()
  const outcomes = new Map<string, Map<string, RolloutOutcome>>()
  const flows = new Map<string, InstanceFlows>()
  const variables = new Map<string, FlowVariable>()
  const enforced = new Set<string>()
  let sequence = 0
  return {
    async create(rollout) {
      sequence += 1
      rollouts.set(rollout.id, copyRollout({ ...rollout, sequence }))
      revision.value += 1
      return sequence
    },
    async update(id, from, change) {
      const kept = rollouts.get(id)
      if (kept === undefined || kept.state !== from.state || kept.released !== from.released) return false
      const reaches =
        kept.released !== change.released || (change.state === 'stopped' && kept.state !== 'stopped')
      kept.state = change.state
      kept.released = change.released
      kept.reason = change.reason
      kept.updatedAt = change.updatedAt
      if (reaches) revision.value += 1
      return true
    },
    async find(id) {
      const kept = rollouts.get(id)
      return kept === undefined ? null : copyRollout(kept)
    },
    async list() {
      return [...rollouts.values()].sort((a, b) => a.sequence - b.sequence).map(copyRollout)
    },
    async saveOutcome(outcome) {
      let ofRollout = outcomes.get(outcome.rollout)
      if (ofRollout === undefined) {
        ofRollout = new Map()
        outcomes.set(outcome.rollout, ofRollout)
      }
      ofRollout.set(outcome.instance, copyOutcome(outcome))
    },
    async outcomes(rollout) {
      return [...(outcomes.get(rollout)?.values() ?? [])]
        .sort((a, b) => compare(a.instance, b.instance))
        .map(copyOutcome)
    },
    async saveFlows(saved) {
      flows.set(saved.instance, copyFlows(saved))
    },
    async flows() {
      return [...flows.values()].sort((a, b) => compare(a.instance, b.instance)).map(copyFlows)
    },
    async setVariable(variable) {
      variables.set(variableKey(variable.scope, variable.name), copyVariable(variable))
      revision.value += 1
    },
    async deleteVariable(scope, name) {
      if (!variables.delete(variableKey(scope, name))) return false
      revision.value += 1
      return true
    },
    async variables() {
      return [...variables.values()].sort(byScopeThenName).map(copyVariable)
    },
    async setMode(group, mode: FlowsMode) {
      if (enforced.has(group) === (mode === 'enforce')) return false
      if (mode === 'enforce') enforced.add(group)
      else enforced.delete(group)
      revision.value += 1
      return true
    },
    async enforced() {
      return [...enforced].sort(compare)
    },
  }
}
