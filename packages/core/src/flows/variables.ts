// Flow variables: set at flowadmin for a group's instances or for one instance, delivered with each
// deploy of a rollout (a flow reads them as `${NAME}`). A secret one is sealed for the store, shown
// to nobody, and opened only for the deploy.
import { actorOf, type Principal } from '../auth/principal.js'
import { type DomainError, err, invalid, ok, type Result } from '../errors.js'
import { INSTANCE_ID_FORM } from '../fleet/identity-rules.js'
import type {
  Clock,
  EventSink,
  FlowVariable,
  RolloutStore,
  VariableScope,
  VariableSealer,
} from '../ports/index.js'
import { MAX_VARIABLE_LENGTH, MAX_VARIABLES, scopeKey, VARIABLE_NAME_FORM } from './rollout-rules.js'

export type VariableError = Extract<
  DomainError,
  { code: 'invalid_request' | 'group_not_found' | 'variable_not_found' | 'sealing_not_configured' }
>

/** A variable as people see it: a secret's value never. */
export interface VariableView {
  name: string
  value: string | null
  secret: boolean
  by: string | null
  at: number
}

/** One entry of a deploy's variables, as Node-RED's `env` lists hold them (`cred`: a secret). */
export interface DeliveredVariable {
  name: string
  value: string
  type: 'str' | 'cred'
}

export interface VariableDeps {
  store: RolloutStore
  /** Seals secret values; null when no key is configured (secrets cannot be set). */
  sealer: VariableSealer | null
  hasGroup(group: string): boolean
  clock: Clock
  events: EventSink
}

const contextOf = (scope: VariableScope, name: string) => `${scopeKey(scope)}\n${name}`
const sameScope = (a: VariableScope, b: VariableScope) => scopeKey(a) === scopeKey(b)

export function createFlowVariables(deps: VariableDeps) {
  const { store, sealer, clock, events } = deps
  let cached: { version: string; variables: Promise<FlowVariable[]> } | null = null

  function scopeProblem(scope: VariableScope): Result<void, VariableError> {
    if (scope.kind === 'group')
      return deps.hasGroup(scope.group) ? ok(undefined) : err({ code: 'group_not_found', group: scope.group })
    return INSTANCE_ID_FORM.test(scope.instance) ? ok(undefined) : err(invalid('a malformed instance id'))
  }

  const viewOf = (variable: FlowVariable): VariableView => ({
    name: variable.name,
    value: variable.secret ? null : variable.value,
    secret: variable.secret,
    by: variable.by,
    at: variable.at,
  })

  return {
    /** Every variable, read once for each `version` of the desired state (a change bumps it). */
    all(version: string): Promise<FlowVariable[]> {
      if (cached?.version !== version) {
        const variables = store.variables()
        cached = { version, variables }
        variables.catch(() => {
          if (cached?.variables === variables) cached = null
        })
      }
      return cached.variables
    },

    /** The scope's variables, as people see them. */
    async list(scope: VariableScope): Promise<Result<VariableView[], VariableError>> {
      const problem = scopeProblem(scope)
      if (!problem.ok) return problem
      return ok((await store.variables()).filter((v) => sameScope(v.scope, scope)).map(viewOf))
    },

    /** Sets a variable; a secret one sealed. Audited as `fleet.variable_set` (never its value). */
    async set(
      principal: Principal,
      address: string | null,
      scope: VariableScope,
      name: string,
      input: { value: unknown; secret?: unknown },
    ): Promise<Result<VariableView, VariableError>> {
      const problem = scopeProblem(scope)
      if (!problem.ok) return problem
      if (!VARIABLE_NAME_FORM.test(name))
        return err(invalid('a variable name is 1 to 64 letters, digits or "_", not starting with a digit'))
      if (typeof input.value !== 'string' || input.value.length > MAX_VARIABLE_LENGTH)
        return err(invalid(`value must be a string of at most ${MAX_VARIABLE_LENGTH} characters`))
      if (input.secret !== undefined && typeof input.secret !== 'boolean')
        return err(invalid('secret must be true or false'))
      const secret = input.secret === true
      if (secret && sealer === null) return err({ code: 'sealing_not_configured' })
      const own = (await store.variables()).filter((v) => sameScope(v.scope, scope))
      if (own.length >= MAX_VARIABLES && !own.some((v) => v.name === name))
        return err(invalid(`a group or an instance has at most ${MAX_VARIABLES} variables`))
      const actor = actorOf(principal, address)
      const variable: FlowVariable = {
        scope,
        name,
        value: secret && sealer !== null ? sealer.seal(contextOf(scope, name), input.value) : input.value,
        secret,
        by: actor.username,
        at: clock.now(),
      }
      await store.setVariable(variable)
      events.emit({
        type: 'fleet.variable_set',
        at: variable.at,
        scope: scopeKey(scope),
        name,
        secret,
        ...actor,
      })
      return ok(viewOf(variable))
    },

    /** Deletes a variable; audited as `fleet.variable_removed`. */
    async remove(
      principal: Principal,
      address: string | null,
      scope: VariableScope,
      name: string,
    ): Promise<Result<void, VariableError>> {
      const problem = scopeProblem(scope)
      if (!problem.ok) return problem
      if (!VARIABLE_NAME_FORM.test(name) || !(await store.deleteVariable(scope, name)))
        return err({ code: 'variable_not_found', scope: scopeKey(scope), name })
      events.emit({
        type: 'fleet.variable_removed',
        at: clock.now(),
        scope: scopeKey(scope),
        name,
        ...actorOf(principal, address),
      })
      return ok(undefined)
    },

    /**
     * The variables as a deploy delivers them, secrets opened. A secret that does not open (sealed
     * under another key) is left out.
     */
    deliver(variables: readonly FlowVariable[]): DeliveredVariable[] {
      const delivered: DeliveredVariable[] = []
      for (const variable of variables) {
        if (!variable.secret) {
          delivered.push({ name: variable.name, value: variable.value, type: 'str' })
          continue
        }
        const opened = sealer?.open(contextOf(variable.scope, variable.name), variable.value) ?? null
        if (opened !== null) delivered.push({ name: variable.name, value: opened, type: 'cred' })
      }
      return delivered
    },
  }
}

export type FlowVariables = ReturnType<typeof createFlowVariables>
