// The events the core emits (audit, metrics): who did what, never a password or a token.
import type { FleetAction } from './fleet.js'

/** Who did something, for events. Never a password or a token. */
export interface Actor {
  username: string | null
  clientId: string | null
  address: string | null
}

/** Why a single sign-on got no token: the `sso.refused` event's reason, and the core's refusal. */
export type SsoRefusalReason =
  | 'unavailable'
  | 'refused'
  | 'invalid'
  | 'no_username'
  | 'name_taken'
  | 'no_permissions'
  | 'too_many'
  | 'busy'

/**
 * Why a person of the directory got no token, or lost theirs at a re-check: the directory could not
 * be reached in time, marks the account disabled, no longer has the person (or gives the name to
 * another entry), the name is a configured user's or another identity's, or their groups map to no
 * permission here. (A wrong password or an unknown name is `login.failed`, as for everyone.)
 */
export type DirectoryRefusalReason = 'unavailable' | 'disabled' | 'gone' | 'name_taken' | 'no_permissions'

/** Why a passkey sign-in was refused: the `passkey.failed` event's reason. */
export type PasskeyFailure =
  | 'unknown_challenge'
  | 'too_many_sign_ins'
  | 'unknown_credential'
  | 'verification_failed'
  | 'counter'
  | 'user_gone'

/**
 * Why an enrolment was refused: its token unknown (or cancelled), spent, expired, another instance
 * holding the id, the resource server full or no longer marked for the fleet, or too many refused
 * enrolments from the address.
 */
export type EnrolRefusal =
  | 'unknown'
  | 'spent'
  | 'expired'
  | 'instance_conflict'
  | 'instance_mismatch'
  | 'too_many_instances'
  | 'resource_server'
  | 'throttled'

export type DomainEvent =
  | ({ type: 'login.succeeded'; at: number } & Actor)
  /** A refused password, user, client or scope; `reason: disabled` for an account the directory disabled. */
  | ({ type: 'login.failed'; at: number; reason?: 'disabled' } & Actor)
  /** A right password, refused by the password grant: the person must give a second factor. */
  | ({ type: 'login.mfa_required'; at: number } & Actor)
  | ({ type: 'login.throttled'; at: number; retryAfter: number } & Actor)
  /** An attempt answered "temporarily unavailable" without verifying its password. */
  | ({ type: 'login.shed'; at: number; retryAfter: number } & Actor)
  | ({ type: 'permission.denied'; at: number; permission: string } & Actor)
  /**
   * A resource server (`clientId`) proved its secret: its first call after a start or reload; later
   * calls with the same secret are not events.
   */
  | ({ type: 'client.authenticated'; at: number } & Actor)
  /** A resource server's id or secret was wrong. */
  | ({ type: 'client.failed'; at: number } & Actor)
  | ({ type: 'client.throttled'; at: number; retryAfter: number } & Actor)
  | ({ type: 'client.shed'; at: number; retryAfter: number } & Actor)
  | ({ type: 'token.revoked'; at: number; owner: string; id: string } & Actor)
  /** An API token was created; `owner` holds it, the actor created it. */
  | ({ type: 'token.created'; at: number; owner: string; id: string; name: string } & Actor)
  /** A token refused and deleted because its user is gone or its user's password changed. */
  | ({
      type: 'token.invalidated'
      at: number
      owner: string
      id: string
      reason: 'user_removed' | 'credential_changed' | 'name_taken'
    } & Actor)
  /** Every token of a user ended at once: by request, or because the user is no longer configured. */
  | ({
      type: 'tokens.revoked_all'
      at: number
      owner: string
      count: number
      reason: 'request' | 'user_removed'
    } & Actor)
  /** Someone signed in with the identity provider and was handed a one-time code. */
  | ({ type: 'sso.succeeded'; at: number; provider: string; permissions: string[] } & Actor)
  /**
   * A sign-in with the identity provider that got no token, and why: the provider could not be
   * reached, refused it, its answer failed a check, it named no username, the name is a configured
   * user's or another identity's, or the person's groups map to no permission here; or too many
   * sign-ins wait to finish from the client's address (`too_many`) or in all (`busy`). `detail` is
   * the message the person was shown.
   */
  | ({
      type: 'sso.refused'
      at: number
      provider: string
      reason: SsoRefusalReason
      detail: string
    } & Actor)
  /** The identity provider ended a person's session (back-channel logout); `count` tokens ended. */
  | ({ type: 'sso.logout'; at: number; provider: string; owner: string | null; count: number } & Actor)
  /**
   * A person of the directory (`directory`: its label) got no token, or their tokens ended at a
   * re-check, and why; `detail` says it in a sentence (never a password).
   */
  | ({
      type: 'directory.refused'
      at: number
      directory: string
      reason: DirectoryRefusalReason
      detail: string
    } & Actor)
  /**
   * A person confirmed a second factor with its first code, from a session of theirs or during a
   * sign-in whose policy asked for one (`atSignIn`: their password alone let them); `sessionsEnded`
   * of their other sessions ended.
   */
  | ({ type: 'mfa.enrolled'; at: number; factor: 'totp'; atSignIn: boolean; sessionsEnded: number } & Actor)
  /** A person proved their second factor (a TOTP code, or a recovery code). */
  | ({ type: 'mfa.succeeded'; at: number; factor: 'totp' | 'recovery_code' } & Actor)
  /** A second factor's code was refused: a wrong code, or a TOTP code whose step was used already. */
  | ({
      type: 'mfa.failed'
      at: number
      factor: 'totp' | 'recovery_code'
      reason: 'wrong' | 'replayed'
    } & Actor)
  /** A code refused unchecked: too many failed codes for this user (or address). */
  | ({ type: 'mfa.throttled'; at: number; retryAfter: number } & Actor)
  /** A recovery code was used up; `remaining` are left. */
  | ({ type: 'mfa.recovery_used'; at: number; remaining: number } & Actor)
  /**
   * Second factors of `owner` were removed: their TOTP app and recovery codes (`totp`), or every
   * one, passkeys too (`all`); `sessionsEnded` of their sessions ended.
   */
  | ({
      type: 'mfa.removed'
      at: number
      owner: string
      factors: 'totp' | 'all'
      sessionsEnded: number
    } & Actor)
  /** A person registered a passkey (`id`, the credential's); `sessionsEnded` of their other sessions ended. */
  | ({ type: 'passkey.registered'; at: number; id: string; name: string; sessionsEnded: number } & Actor)
  /** A person removed one of their passkeys; `sessionsEnded` of their other sessions ended. */
  | ({ type: 'passkey.removed'; at: number; owner: string; id: string; sessionsEnded: number } & Actor)
  /** Someone signed in with a passkey (`username` is whose it is). */
  | ({ type: 'passkey.succeeded'; at: number; id: string } & Actor)
  /**
   * A passkey sign-in was refused, and why; `id` is the credential the answer named (null when
   * the challenge was refused before it was read). `unknown_challenge`: not one this server gave
   * this browser and address, past its time, or used already. `counter`: the authenticator's
   * counter did not grow, as a cloned authenticator's would not. `too_many_sign_ins`: the passkey
   * verified, but too many sign-ins wait to finish (their one-time codes) from the client's
   * address or in all, so this one did not end.
   */
  | ({ type: 'passkey.failed'; at: number; id: string | null; reason: PasskeyFailure } & Actor)
  | ({ type: 'module.enabled'; at: number; module: string; sets: string[] } & Actor)
  | ({ type: 'module.disabled'; at: number; module: string; sets: string[] } & Actor)
  | ({ type: 'module.installed'; at: number; module: string; version: string } & Actor)
  | ({ type: 'module.removed'; at: number; module: string; version: string } & Actor)
  /**
   * An operator decided a module the fleet's instances reported and no one had decided: it joins
   * the desired state with these flags (`set` is the node set's id).
   */
  | ({
      type: 'module.adopted'
      at: number
      module: string
      sets: Array<{ set: string; enabled: boolean }>
    } & Actor)
  /** A fleet instance (of resource server `resourceServer`) was forgotten, with its report. */
  | ({ type: 'fleet.instance_removed'; at: number; instance: string; resourceServer: string } & Actor)
  /** A fleet instance (`clientId` its resource server) runs the desired state of this version. */
  | ({ type: 'fleet.applied'; at: number; instance: string; version: string } & Actor)
  /** A fleet instance's Node-RED or npm refused a change; `message` is its own. */
  | ({
      type: 'fleet.refused'
      at: number
      instance: string
      module: string
      action: FleetAction
      message: string
    } & Actor)
  /** A fleet instance installed `version` of a module, which its Node-RED loads when it restarts. */
  | ({
      type: 'fleet.restart_needed'
      at: number
      instance: string
      module: string
      version: string
      running: string
    } & Actor)
  /** A fleet instance runs another version of a module than flowadmin installed. */
  | ({
      type: 'fleet.version_mismatch'
      at: number
      instance: string
      module: string
      version: string
      running: string
    } & Actor)
  /**
   * Someone changed a module at a fleet instance itself, not through flowadmin: `by` is the
   * Node-RED user when Node-RED named one, `changedAt` when (by the instance's clock).
   */
  | ({
      type: 'fleet.changed_by_hand'
      at: number
      instance: string
      module: string
      action: FleetAction
      version: string | null
      by: string | null
      changedAt: number
    } & Actor)
  /** A fleet instance's agent undid a hand change, as the desired state decides otherwise. */
  | ({ type: 'fleet.reverted'; at: number; instance: string; module: string; action: FleetAction } & Actor)
  /** A fleet instance's report was the first to show a module (no instance had reported it before). */
  | ({ type: 'fleet.module_reported'; at: number; instance: string; module: string; version: string } & Actor)
  /** A fleet instance is in touch again (its poll holds a lease). */
  | ({ type: 'fleet.connected'; at: number; instance: string; resourceServer: string } & Actor)
  /** A fleet instance is out of touch: its poll's connection closed, or its lease ran out. */
  | ({ type: 'fleet.disconnected'; at: number; instance: string; resourceServer: string } & Actor)
  /** An operator made an enrolment token (`enrolment` its public id). */
  | ({
      type: 'fleet.enrolment_created'
      at: number
      enrolment: string
      resourceServer: string
      uses: number
      expiresAt: number
      instance: string | null
      groups: string[]
    } & Actor)
  /** An operator cancelled an enrolment token. */
  | ({ type: 'fleet.enrolment_cancelled'; at: number; enrolment: string } & Actor)
  /** An instance enrolled with a token made by `createdBy` (null: the command line). */
  | ({
      type: 'fleet.enrolled'
      at: number
      instance: string
      resourceServer: string
      enrolment: string
      createdBy: string | null
      nodeRedVersion: string | null
    } & Actor)
  /** An enrolment was refused; `reason` is told to the trail alone. */
  | ({
      type: 'fleet.enrol_refused'
      at: number
      reason: EnrolRefusal
      instance: string | null
      enrolment: string | null
    } & Actor)
  /** An enrolled instance named another instance than its own (`requested`). */
  | ({
      type: 'fleet.instance_mismatch'
      at: number
      instance: string
      resourceServer: string
      requested: string
    } & Actor)
  /** An operator revoked an instance: its credential and its editors' sessions (`sessionsEnded`). */
  | ({
      type: 'fleet.instance_revoked'
      at: number
      instance: string
      resourceServer: string
      sessionsEnded: number
    } & Actor)
  /** An operator asked an instance to rotate its credential. */
  | ({ type: 'fleet.rotation_asked'; at: number; instance: string; resourceServer: string } & Actor)
  /** An instance's new secret was used for the first time: the old one stopped. */
  | ({ type: 'fleet.credential_rotated'; at: number; instance: string; resourceServer: string } & Actor)
  /** This flowadmin wrote its `fleet` setting to the store, where another's was. */
  | ({ type: 'fleet.settings_changed'; at: number; setting: 'prune'; from: boolean; to: boolean } & Actor)
  /** An operator put an instance in a group of instances. */
  | ({ type: 'access.group_assigned'; at: number; group: string; instance: string } & Actor)
  /** An operator took an instance out of a group it was put in. */
  | ({ type: 'access.group_unassigned'; at: number; group: string; instance: string } & Actor)
  /**
   * A settings reload changed who may do what: the roles and groups added, removed or changed, by
   * name, and each user's rights words added and removed. No actor: the reload asked.
   */
  | ({
      type: 'access.reloaded'
      at: number
      roles: string[]
      groups: string[]
      grants: Array<{ username: string; added: string[]; removed: string[] }>
    } & Actor)
  /**
   * A live token of `username` answered not active to the client `clientId` (an enrolled instance,
   * or a resource server with its shared secret): its person holds no grant there. Once per token
   * and client in a while (see access/audit.ts).
   */
  | ({ type: 'access.refused'; at: number; resourceServer: string; instance: string | null } & Actor)
  /**
   * Someone made a snapshot of flows: version `version` of `name`, `snapshot` its id; `instance`
   * the instance whose flows it holds, sent as they asked, or null for an upload.
   */
  | ({
      type: 'fleet.snapshot_created'
      at: number
      snapshot: string
      name: string
      version: number
      nodes: number
      instance: string | null
      /** The instance that sent the flows (the client it authenticated as, its address); absent for an upload. */
      sender?: SnapshotSenderOf
    } & Actor)
  /** Someone asked an instance to send the flows it runs, to be kept as a snapshot of `name`. */
  | ({ type: 'fleet.snapshot_asked'; at: number; instance: string; name: string } & Actor)
  /**
   * The flows an instance sent as asked were refused (`message` says why), or not kept; the actor
   * is who asked, `sender` the instance.
   */
  | ({
      type: 'fleet.snapshot_refused'
      at: number
      instance: string
      name: string
      message: string
      sender: SnapshotSenderOf
    } & Actor)
  /** Someone rolled a snapshot out to a group (`kind` rollback: a group's rollback). */
  | ({
      type: 'fleet.rollout_started'
      at: number
      rollout: string
      group: string
      snapshot: string
      kind: 'rollout' | 'rollback'
      /** `all`, or `staged:N` (the first N instances first). */
      strategy: string
      /** How many instances it reaches. */
      instances: number
    } & Actor)
  /**
   * An instance applied a rollout (`fleet.rollout_outcome`), or restored its target's flows after
   * they changed on it (`fleet.flows_restored`, a group in `enforce` mode): what it said.
   */
  | ({
      type: 'fleet.rollout_outcome' | 'fleet.flows_restored'
      at: number
      rollout: string
      instance: string
      outcome: 'succeeded' | 'failed'
      rev: string | null
      message: string | null
      /** Ids of nodes that need credentials the instance does not have. */
      missingCredentials: string[]
    } & Actor)
  /** A rollout ended: `succeeded`, `failed`, or `stopped` (`reason` says why). */
  | ({
      type: 'fleet.rollout_finished'
      at: number
      rollout: string
      group: string
      state: 'succeeded' | 'stopped' | 'failed'
      reason: string | null
    } & Actor)
  /** An instance's flows changed on it, away from what its last rollout deployed; `by` who deployed. */
  | ({
      type: 'fleet.flows_drifted'
      at: number
      instance: string
      rollout: string | null
      rev: string
      by: string | null
    } & Actor)
  /** A group's flows mode was set: `report` changes made on its instances, or `enforce` its target. */
  | ({ type: 'fleet.flows_mode_set'; at: number; group: string; mode: 'report' | 'enforce' } & Actor)
  /** A flow variable was set (`scope`: `group:<name>` or `instance:<id>`); never its value. */
  | ({ type: 'fleet.variable_set'; at: number; scope: string; name: string; secret: boolean } & Actor)
  /** A flow variable was removed. */
  | ({ type: 'fleet.variable_removed'; at: number; scope: string; name: string } & Actor)

/** The instance that sent flows to be kept as a snapshot: its client id and address. */
export interface SnapshotSenderOf {
  client: string
  address: string | null
}

export interface EventSink {
  /** Receives an event. Must not throw; a slow sink should buffer. */
  emit(event: DomainEvent): void
}

/**
 * How each event ends: `failure` for what records something refused or failed. Every event type
 * must be here (the type checker holds it), so a new one cannot be left out.
 */
export const EVENT_OUTCOMES: Readonly<Record<DomainEvent['type'], 'success' | 'failure'>> = {
  'login.succeeded': 'success',
  'login.failed': 'failure',
  'login.mfa_required': 'failure',
  'login.throttled': 'failure',
  'login.shed': 'failure',
  'permission.denied': 'failure',
  'client.authenticated': 'success',
  'client.failed': 'failure',
  'client.throttled': 'failure',
  'client.shed': 'failure',
  'token.revoked': 'success',
  'token.created': 'success',
  'token.invalidated': 'success',
  'tokens.revoked_all': 'success',
  'sso.succeeded': 'success',
  'sso.refused': 'failure',
  'sso.logout': 'success',
  'directory.refused': 'failure',
  'mfa.enrolled': 'success',
  'mfa.succeeded': 'success',
  'mfa.failed': 'failure',
  'mfa.throttled': 'failure',
  'mfa.recovery_used': 'success',
  'mfa.removed': 'success',
  'passkey.registered': 'success',
  'passkey.removed': 'success',
  'passkey.succeeded': 'success',
  'passkey.failed': 'failure',
  'module.enabled': 'success',
  'module.disabled': 'success',
  'module.installed': 'success',
  'module.removed': 'success',
  'module.adopted': 'success',
  'fleet.applied': 'success',
  'fleet.refused': 'failure',
  'fleet.restart_needed': 'failure',
  'fleet.version_mismatch': 'failure',
  'fleet.changed_by_hand': 'success',
  'fleet.reverted': 'success',
  'fleet.module_reported': 'success',
  'fleet.connected': 'success',
  'fleet.disconnected': 'success',
  'fleet.instance_removed': 'success',
  'fleet.settings_changed': 'success',
  'fleet.enrolment_created': 'success',
  'fleet.enrolment_cancelled': 'success',
  'fleet.enrolled': 'success',
  'fleet.enrol_refused': 'failure',
  'fleet.instance_mismatch': 'failure',
  'fleet.instance_revoked': 'success',
  'fleet.rotation_asked': 'success',
  'fleet.credential_rotated': 'success',
  'access.group_assigned': 'success',
  'access.group_unassigned': 'success',
  'access.reloaded': 'success',
  'access.refused': 'failure',
  'fleet.snapshot_created': 'success',
  'fleet.snapshot_asked': 'success',
  'fleet.snapshot_refused': 'failure',
  'fleet.rollout_started': 'success',
  'fleet.rollout_outcome': 'success',
  'fleet.flows_restored': 'success',
  'fleet.rollout_finished': 'success',
  'fleet.flows_drifted': 'success',
  'fleet.flows_mode_set': 'success',
  'fleet.variable_set': 'success',
  'fleet.variable_removed': 'success',
}
