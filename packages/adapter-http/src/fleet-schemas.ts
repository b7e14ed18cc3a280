import type { IdentifiedInstanceView } from '@flowadmin/core'
import * as v from 'valibot'
import { NullableTime, Time } from './schemas.js'

// What fleet mode's routes read and show: an instance's report, the desired state, the
// instances with their drift.

/** An instance's id, as its helper names it. */
export const INSTANCE_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/
/**
 * Well-formed text without control characters: a lone surrogate or a NUL cannot be stored (as
 * PostgreSQL's jsonb refuses `\u0000`), and a control character would forge lines where it is shown.
 */
const TEXT = /^[^\p{Cc}\p{Cs}]*$/u
const text = (max: number, min = 0) =>
  v.pipe(
    v.string(),
    v.minLength(min),
    v.maxLength(max),
    v.regex(TEXT, 'must be well-formed text without control characters'),
  )
const Name = text(214, 1)
const Short = text(64)
const Message = text(1000)
const Type = text(214)

const Action = v.picklist(['enable', 'disable', 'install', 'upgrade', 'remove'])
/** ms since the epoch. */
const Millis = v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(Number.MAX_SAFE_INTEGER))

/** What an instance reports of itself (`POST /fleet/instances/{id}/report`). */
export const InstanceReportSchema = v.pipe(
  v.strictObject({
    sequence: v.optional(
      v.pipe(
        Millis,
        v.description(
          'Greater in each report of the instance (its helper sends max(now in ms, last + 1)): a report whose ' +
            'sequence is not greater than the one stored is acknowledged and changes nothing. Helpers before it ' +
            'send none: such a report is saved whatever came before.',
        ),
      ),
    ),
    nodeRedVersion: Short,
    modules: v.pipe(
      v.array(
        v.strictObject({
          name: Name,
          version: Short,
          pendingVersion: v.optional(
            v.pipe(
              Short,
              v.description('Node-RED’s `pending_version`: installed, loaded when Node-RED restarts.'),
            ),
          ),
          sets: v.pipe(
            v.array(
              v.strictObject({
                name: Name,
                types: v.pipe(v.array(Type), v.maxLength(1000)),
                enabled: v.boolean(),
                loaded: v.boolean(),
                err: v.optional(Message),
              }),
            ),
            v.maxLength(200),
          ),
        }),
      ),
      v.maxLength(2000),
    ),
    typesInUse: v.pipe(v.array(Type), v.maxLength(10000)),
    applied: v.pipe(
      v.nullable(Short),
      v.description('The desired version it last finished working on; null before the first.'),
    ),
    applying: v.optional(v.pipe(v.boolean(), v.description('It is applying a change right now.'))),
    failures: v.pipe(
      v.array(v.strictObject({ module: Name, action: Action, message: Message })),
      v.maxLength(2000),
    ),
    changes: v.optional(
      v.pipe(
        v.array(
          v.strictObject({
            module: Name,
            action: Action,
            version: v.optional(Short),
            by: v.pipe(v.nullable(Name), v.description('The Node-RED user, when its audit named one.')),
            at: v.pipe(Millis, v.description('When, in ms since the epoch (the instance’s clock).')),
          }),
        ),
        v.maxLength(100),
        v.description('What changed at the instance, not by its agent, since its previous report.'),
      ),
    ),
    reverted: v.optional(
      v.pipe(
        v.array(v.strictObject({ module: Name, action: Action })),
        v.maxLength(100),
        v.description('Hand changes its agent undid since its previous report.'),
      ),
    ),
  }),
  v.metadata({ ref: 'InstanceReport' }),
)

export const DesiredStateSchema = v.pipe(
  v.strictObject({
    version: v.pipe(
      v.string(),
      v.description('The revision, which every change of the desired state bumps.'),
    ),
    prune: v.boolean(),
    hold: v.pipe(
      v.number(),
      v.description('The longest this flowadmin holds a poll, in seconds: ask `Prefer: wait=` no more.'),
    ),
    modules: v.array(
      v.strictObject({
        name: v.string(),
        sets: v.array(v.strictObject({ name: v.string(), enabled: v.boolean() })),
      }),
    ),
    installs: v.array(
      v.strictObject({
        module: v.string(),
        version: v.pipe(
          v.nullable(v.string()),
          v.description('As installed at flowadmin; null in old records.'),
        ),
        integrity: v.pipe(
          v.optional(v.string()),
          v.description(
            'The integrity (`sha512-…`, SRI) of the exact tarball flowadmin installed: the instance installs a tarball only when its SHA-512 is this. Absent in old records (the instance installs by name and version), and always together with `tarball`.',
          ),
        ),
        tarball: v.pipe(
          v.optional(v.string()),
          v.description('The URL flowadmin fetched that tarball from; the instance downloads it there.'),
        ),
      }),
    ),
    removals: v.array(v.string()),
    rotate: v.optional(
      v.pipe(
        v.literal(true),
        v.description(
          'Only for an enrolled instance an operator asked to rotate its credential: it calls ' +
            '`POST /fleet/instances/{id}/credential` for a new secret. Such a poll is answered at once, also when the version is unchanged.',
        ),
      ),
    ),
    snapshot: v.optional(
      v.pipe(
        v.strictObject({ name: v.string() }),
        v.description(
          'Only when someone asked the instance for the flows it runs: it sends them to ' +
            '`POST /fleet/instances/{id}/flows` under this name. Such a poll ends with a 200, also when the version is unchanged.',
        ),
      ),
    ),
    flows: v.optional(
      v.pipe(
        v.strictObject({
          rollout: v.string(),
          snapshot: v.string(),
          mode: v.picklist(['report', 'enforce']),
          variables: v.string(),
        }),
        v.description(
          'Only when a rollout reaches the instance: the rollout its flows should be. When the rollout or the ' +
            '`variables` digest differ from what it deployed last, it fetches `GET /fleet/instances/{id}/flows/target`, ' +
            'deploys it and reports to `POST /fleet/instances/{id}/flows/report`. `enforce`: flows changed on the ' +
            'instance are deployed again.',
        ),
      ),
    ),
  }),
  v.metadata({ ref: 'FleetDesiredState' }),
)

/** Where an instance differs from the desired state. */
export const DriftSchema = v.pipe(
  v.strictObject({
    module: v.string(),
    reason: v.picklist([
      'pending',
      'applying',
      'refused',
      'install_failed',
      'remove_failed',
      'version_mismatch',
      'restart_needed',
      'changed_by_hand',
      'removed_by_hand',
      'installed_by_hand',
    ]),
    message: v.optional(
      v.pipe(v.string(), v.description('Node-RED’s or npm’s own message, or the versions.')),
    ),
    by: v.optional(
      v.pipe(
        v.nullable(v.string()),
        v.description('A hand change’s Node-RED user, when Node-RED named one.'),
      ),
    ),
    at: v.optional(v.pipe(v.number(), v.description('When the hand change was made: ms since the epoch.'))),
  }),
  v.metadata({ ref: 'FleetDrift' }),
)

export const InstanceSchema = v.pipe(
  v.strictObject({
    id: v.string(),
    resourceServer: v.string(),
    nodeRedVersion: v.nullable(v.string()),
    connected: v.pipe(
      v.boolean(),
      v.description(
        'Its lease runs: a poll of its started within the hold time and 10 s, and its connection did not close.',
      ),
    ),
    lastSeen: Time,
    lastReport: NullableTime('When its last report arrived; null before the first.'),
    applied: v.nullable(v.pipe(v.string(), v.description('The desired state’s version it last applied.'))),
    modules: v.pipe(v.number(), v.description('How many node modules it reports.')),
    drift: v.array(DriftSchema),
    revoked: v.pipe(
      v.boolean(),
      v.description(
        'An operator revoked it: its credential is refused everywhere, and it is never connected.',
      ),
    ),
    enrolment: v.pipe(
      v.nullable(
        v.strictObject({
          at: Time,
          by: v.pipe(
            v.nullable(v.string()),
            v.description('Who made its enrolment token (null: the command line).'),
          ),
          rotatedAt: NullableTime('When its credential last changed by a rotation; null when never.'),
          revokedAt: NullableTime('When it was revoked; null while it is not.'),
        }),
      ),
      v.description('Its enrolment; null for an instance that uses its resource server’s shared secret.'),
    ),
  }),
  v.metadata({ ref: 'FleetInstance' }),
)

/** An instance as the API shows it. */
const isoOrNull = (at: number | null) => (at === null ? null : new Date(at).toISOString())
export const instanceJson = (view: IdentifiedInstanceView) => ({
  ...view,
  lastSeen: new Date(view.lastSeen).toISOString(),
  lastReport: isoOrNull(view.lastReport),
  enrolment:
    view.enrolment === null
      ? null
      : {
          at: new Date(view.enrolment.at).toISOString(),
          by: view.enrolment.by,
          rotatedAt: isoOrNull(view.enrolment.rotatedAt),
          revokedAt: isoOrNull(view.enrolment.revokedAt),
        },
})
