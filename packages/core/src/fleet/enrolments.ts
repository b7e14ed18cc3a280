import { addressScope } from '../auth/address-scope.js'
import type { Principal } from '../auth/principal.js'
import type { ResourceServerOptions } from '../auth/resource-servers.js'
import type { Throttle } from '../auth/throttle.js'
import { type DomainError, err, invalid, ok, type Result } from '../errors.js'
import type {
  Actor,
  Clock,
  Digest,
  EnrolmentRecord,
  EnrolmentStore,
  EnrolRefusal,
  EventSink,
  FleetStore,
  RandomSource,
} from '../ports/index.js'
import { base64url } from '../tokens/encoding.js'
import {
  ENROLMENT_BOUNDS,
  ENROLMENT_TOKEN_PREFIX,
  GROUP_NAME_FORM,
  generatedInstanceId,
  INSTANCE_ID_FORM,
  INSTANCE_SECRET_PREFIX,
  instanceClientId,
  MAX_ENROLMENT_GROUPS,
  MAX_SECRET_LENGTH,
  newSecret,
} from './identity-rules.js'

// Enrolment: an operator makes a token (one use or N, short-lived, perhaps naming the instance);
// an instance spends one use of it for a credential of its own. The token is shown once and kept
// as its SHA-256; so is the credential's secret.

/** An enrolment token as people see it: never the token. */
export type EnrolmentView = Omit<EnrolmentRecord, 'hash'>

/** What an operator asks for; absent fields take the defaults of ENROLMENT_BOUNDS. */
export interface EnrolmentRequest {
  resourceServer: string
  uses?: number | undefined
  /** Seconds. */
  expiresIn?: number | undefined
  instance?: string | null | undefined
  groups?: readonly string[] | undefined
}

/** What an instance sends to enrol. */
export interface EnrolRequest {
  token: string
  instance?: string | null | undefined
  nodeRedVersion?: string | null | undefined
}

/** An instance's new credential, shown once. */
export interface Enrolled {
  instance: string
  resourceServer: string
  clientId: string
  clientSecret: string
}

export type EnrolError = Extract<
  DomainError,
  {
    code:
      | 'invalid_request'
      | 'invalid_enrolment'
      | 'instance_mismatch'
      | 'instance_conflict'
      | 'too_many_instances'
      | 'throttled'
      | 'temporarily_unavailable'
  }
>

export interface EnrolmentDeps {
  store: EnrolmentStore
  fleet: FleetStore
  /** The configured resource server `id`, or null. */
  server: (id: string) => ResourceServerOptions | null
  throttle: Throttle
  clock: Clock
  random: RandomSource
  digest: Digest
  events: EventSink
  /** Enrolled instances (not revoked) one resource server may hold. */
  maxInstances: number
}

/** Seconds an enrolment shed because too many are in flight from its address is told to wait. */
const BUSY_RETRY_AFTER = 1

/** Throttle keys of enrolments: apart from people's and resource servers' (see resource-servers). */
const throttleName = (address: string) => `\u0000enrolment\u0000${addressScope(address)}`
const throttleAddress = (address: string) => `enrolment ${addressScope(address)}`

const viewOf = ({ hash: _hash, ...view }: EnrolmentRecord): EnrolmentView => view

/** Why an enrolment request breaks the rules, naming the field, or null. */
function problemOf(request: EnrolmentRequest, server: ResourceServerOptions | null): string | null {
  if (server === null || server.fleet !== true)
    return `resourceServer: no resource server marked for the fleet ("fleet": true) is called ${JSON.stringify(request.resourceServer)}`
  const { uses, expiresIn } = ENROLMENT_BOUNDS
  if (
    request.uses !== undefined &&
    !(Number.isInteger(request.uses) && request.uses >= uses.min && request.uses <= uses.max)
  )
    return `uses: must be a whole number from ${uses.min} to ${uses.max}`
  const seconds = request.expiresIn
  if (
    seconds !== undefined &&
    !(Number.isInteger(seconds) && seconds >= expiresIn.min && seconds <= expiresIn.max)
  )
    return `expiresIn: must be a whole number of seconds from ${expiresIn.min} to ${expiresIn.max}`
  const instance = request.instance ?? null
  if (instance !== null && !INSTANCE_ID_FORM.test(instance))
    return 'instance: must be 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit'
  if (instance !== null && (request.uses ?? uses.default) !== 1)
    return 'instance: a token that names its instance enrols one instance ("uses": 1)'
  const groups = request.groups ?? []
  if (groups.length > MAX_ENROLMENT_GROUPS) return `groups: at most ${MAX_ENROLMENT_GROUPS}`
  if (groups.some((group) => !GROUP_NAME_FORM.test(group)))
    return 'groups: each must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit'
  if (new Set(groups).size !== groups.length) return 'groups: each group once'
  return null
}

/** Enrolment tokens and their use: see the file's first comment. */
export function createEnrolments(deps: EnrolmentDeps) {
  const { store, clock, digest, events } = deps

  /** Refuses an enrolment: one answer for the instance, the reason in the trail. */
  const refuse = (
    reason: EnrolRefusal,
    address: string,
    enrolment: EnrolmentRecord | null,
    instance: string | null,
  ) => {
    events.emit({
      type: 'fleet.enrol_refused',
      at: clock.now(),
      reason,
      instance,
      enrolment: enrolment?.id ?? null,
      username: null,
      clientId: null,
      address,
    })
  }

  /** Why this stored token cannot enrol now, or null. */
  const spentOf = (record: EnrolmentRecord | null, now: number): EnrolRefusal | null => {
    if (record === null) return 'unknown'
    if (record.left <= 0) return 'spent'
    if (record.expiresAt <= now) return 'expired'
    const server = deps.server(record.resourceServer)
    return server === null || server.fleet !== true ? 'resource_server' : null
  }

  /** Spends a use of the token for a credential; the throttle's attempt is ended by the caller. */
  async function spend(
    request: EnrolRequest,
    address: string,
  ): Promise<Result<Enrolled, EnrolError> & { counted: boolean }> {
    const refused = (reason: EnrolRefusal, record: EnrolmentRecord | null, instance: string | null) => {
      refuse(reason, address, record, instance)
      return { ...err({ code: 'invalid_enrolment' as const }), counted: true }
    }
    if (!request.token.startsWith(ENROLMENT_TOKEN_PREFIX) || request.token.length > MAX_SECRET_LENGTH)
      return refused('unknown', null, null)
    const hash = await digest.sha256(request.token)
    const record = await store.findEnrolment(hash)
    const requested = request.instance ?? null
    const spent = spentOf(record, clock.now())
    if (spent !== null || record === null) return refused(spent ?? 'unknown', record, requested)
    if (record.instance !== null && requested !== null && requested !== record.instance) {
      refuse('instance_mismatch', address, record, requested)
      return {
        ...err({ code: 'instance_mismatch' as const, instance: requested, where: 'enrolment' as const }),
        counted: false,
      }
    }
    const instance = record.instance ?? requested ?? generatedInstanceId(deps.random)
    const conflict = () => {
      refuse('instance_conflict', address, record, instance)
      return {
        ...err({ code: 'instance_conflict' as const, instance, enrolled: true as const }),
        counted: false,
      }
    }
    // An id some other resource server's instances use (as before enrolment) is theirs.
    const bound = await deps.fleet.find(instance)
    if (bound !== null && bound.resourceServer !== record.resourceServer) return conflict()
    const clientSecret = newSecret(deps.random, INSTANCE_SECRET_PREFIX)
    const now = clock.now()
    const outcome = await store.enrol(
      hash,
      {
        instance,
        resourceServer: record.resourceServer,
        secretHash: await digest.sha256(clientSecret),
        nextHash: null,
        enrolledAt: now,
        enrolledBy: record.createdBy,
        rotateAsked: false,
        rotatedAt: null,
        revokedAt: null,
      },
      deps.maxInstances,
      now,
    )
    if (outcome === 'spent') return refused('spent', record, instance)
    if (outcome === 'conflict') return conflict()
    if (outcome === 'full') {
      refuse('too_many_instances', address, record, instance)
      return { ...err({ code: 'too_many_instances' as const, limit: deps.maxInstances }), counted: false }
    }
    const clientId = instanceClientId(record.resourceServer, instance)
    // Listed from now on (not connected until it polls), its id bound to its resource server.
    await deps.fleet.claim(instance, record.resourceServer, now)
    events.emit({
      type: 'fleet.enrolled',
      at: now,
      instance,
      resourceServer: record.resourceServer,
      enrolment: record.id,
      createdBy: record.createdBy,
      nodeRedVersion: request.nodeRedVersion ?? null,
      username: null,
      clientId,
      address,
    })
    return {
      ...ok({ instance, resourceServer: record.resourceServer, clientId, clientSecret }),
      counted: false,
    }
  }

  return {
    /**
     * Makes an enrolment token for `principal`, who must hold every right (`*`): the credential it
     * yields checks its editors' passwords and learns of their tokens, which is more than the
     * nodes. Returns its view with the token, shown this once.
     */
    async create(
      principal: Principal,
      request: EnrolmentRequest,
      address: string | null,
    ): Promise<
      Result<
        EnrolmentView & { token: string },
        { code: 'forbidden'; permission: string } | ReturnType<typeof invalid>
      >
    > {
      if (!principal.permissions.includes('*')) return err({ code: 'forbidden', permission: '*' })
      const problem = problemOf(request, deps.server(request.resourceServer))
      if (problem !== null) return err(invalid(problem))
      const now = clock.now()
      const token = newSecret(deps.random, ENROLMENT_TOKEN_PREFIX)
      const uses = request.uses ?? ENROLMENT_BOUNDS.uses.default
      const record: EnrolmentRecord = {
        id: base64url(deps.random.bytes(12)),
        hash: await digest.sha256(token),
        resourceServer: request.resourceServer,
        uses,
        left: uses,
        createdAt: now,
        expiresAt: now + (request.expiresIn ?? ENROLMENT_BOUNDS.expiresIn.default) * 1000,
        instance: request.instance ?? null,
        groups: [...(request.groups ?? [])],
        createdBy: principal.kind === 'user' ? principal.username : null,
      }
      await store.saveEnrolment(record)
      const actor: Actor =
        principal.kind === 'user'
          ? { username: principal.username, clientId: principal.clientId, address }
          : { username: null, clientId: null, address }
      events.emit({
        type: 'fleet.enrolment_created',
        at: now,
        enrolment: record.id,
        resourceServer: record.resourceServer,
        uses,
        expiresAt: record.expiresAt,
        instance: record.instance,
        groups: record.groups,
        ...actor,
      })
      return ok({ ...viewOf(record), token })
    },

    /** Every enrolment token (spent and expired ones too, until swept), oldest first. */
    list: async (): Promise<EnrolmentView[]> => (await store.enrolments()).map(viewOf),

    /** Cancels a token: false when there is no such token. */
    async cancel(id: string, actor: Actor): Promise<boolean> {
      if (!(await store.deleteEnrolment(id))) return false
      events.emit({ type: 'fleet.enrolment_cancelled', at: clock.now(), enrolment: id, ...actor })
      return true
    },

    /**
     * An instance spends a use of an enrolment token for a credential of its own: throttled per
     * address like sign-ins; an unknown, spent, expired or cancelled token is one answer,
     * `invalid_enrolment` (the reason goes to the trail).
     */
    async enrol(request: EnrolRequest, address: string): Promise<Result<Enrolled, EnrolError>> {
      const requested = request.instance ?? null
      if (requested !== null && !INSTANCE_ID_FORM.test(requested))
        return err(
          invalid(
            'instance: must be 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit',
          ),
        )
      const decision = await deps.throttle.begin(throttleName(address), throttleAddress(address))
      if (decision.outcome === 'throttled') {
        refuse('throttled', address, null, requested)
        return err({ code: 'throttled', retryAfter: decision.retryAfter })
      }
      if (decision.outcome !== 'proceed')
        return err({ code: 'temporarily_unavailable', retryAfter: BUSY_RETRY_AFTER })
      let outcome: 'failed' | 'succeeded' | 'abandoned' = 'abandoned'
      try {
        const { counted, ...result } = await spend(request, address)
        outcome = counted ? 'failed' : 'succeeded'
        return result
      } finally {
        await deps.throttle.finish(decision.attempt, outcome)
      }
    },
  }
}

export type Enrolments = ReturnType<typeof createEnrolments>
