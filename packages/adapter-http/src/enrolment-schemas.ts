import { ENROLMENT_BOUNDS, GROUP_NAME_FORM, MAX_ENROLMENT_GROUPS } from '@flowadmin/core'
import * as v from 'valibot'
import { INSTANCE_ID } from './fleet-schemas.js'
import { Time } from './schemas.js'

// What the fleet's enrolment routes read and show.

const { uses, expiresIn } = ENROLMENT_BOUNDS
// Each message names its field: the answer shows the first one as it is.
const InstanceId = v.pipe(
  v.string('instance: must be a string'),
  v.regex(
    INSTANCE_ID,
    'instance: must be 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit',
  ),
)
const Whole = (field: string, min: number, max: number, description: string) => {
  const message = `${field}: must be a whole number from ${min} to ${max}`
  return v.pipe(
    v.number(message),
    v.integer(message),
    v.minValue(min, message),
    v.maxValue(max, message),
    v.description(description),
  )
}

/** `POST /fleet/enrolments`. */
export const CreateEnrolmentSchema = v.pipe(
  v.strictObject({
    resourceServer: v.pipe(
      v.string('resourceServer: must be a resource server id'),
      v.minLength(1, 'resourceServer: must be a resource server id'),
      v.description('The resource server its instances join: one marked `"fleet": true`.'),
    ),
    uses: v.optional(
      Whole('uses', uses.min, uses.max, `How many instances it may enrol; default ${uses.default}.`),
    ),
    expiresIn: v.optional(
      Whole(
        'expiresIn',
        expiresIn.min,
        expiresIn.max,
        `Seconds until it expires; default ${expiresIn.default}.`,
      ),
    ),
    instance: v.optional(
      v.pipe(v.nullable(InstanceId), v.description('The instance id it enrols; only with `"uses": 1`.')),
    ),
    groups: v.optional(
      v.pipe(
        v.array(
          v.pipe(
            v.string('groups: each must be a string'),
            v.regex(
              GROUP_NAME_FORM,
              'groups: each must be 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit',
            ),
          ),
        ),
        v.maxLength(MAX_ENROLMENT_GROUPS, `groups: at most ${MAX_ENROLMENT_GROUPS}`),
        v.description('The groups its instances are to join (kept for later).'),
      ),
    ),
  }),
  v.metadata({ ref: 'CreateFleetEnrolment' }),
)

/** An enrolment token as shown; `token` only in the answer that made it. */
export const EnrolmentSchema = v.strictObject({
  id: v.pipe(v.string(), v.description('Public id: names the token for `DELETE /fleet/enrolments/{id}`.')),
  token: v.pipe(v.string(), v.description('`fae_…`: shown this once, kept as its SHA-256.')),
  resourceServer: v.string(),
  uses: v.number(),
  left: v.pipe(v.number(), v.description('How many instances it may still enrol.')),
  createdAt: Time,
  expiresAt: Time,
  instance: v.nullable(v.string()),
  groups: v.array(v.string()),
  createdBy: v.pipe(v.nullable(v.string()), v.description('Who made it; null: the command line.')),
})

/** `POST /fleet/enrol`. */
export const EnrolRequestSchema = v.pipe(
  v.strictObject({
    token: v.pipe(
      v.string('token: must be the enrolment token (fae_…)'),
      v.minLength(1, 'token: must be the enrolment token (fae_…)'),
      v.maxLength(256, 'token: must be the enrolment token (fae_…)'),
      v.description('The enrolment token, `fae_…`.'),
    ),
    instance: v.optional(
      v.pipe(
        v.nullable(InstanceId),
        v.description('The id it asks for; refused when the token names another (`instance_mismatch`).'),
      ),
    ),
    nodeRedVersion: v.optional(
      v.nullable(
        v.pipe(
          v.string('nodeRedVersion: must be a string'),
          v.maxLength(64, 'nodeRedVersion: at most 64 characters'),
        ),
      ),
    ),
  }),
  v.metadata({ ref: 'FleetEnrolRequest' }),
)

/** An instance's new credential. */
export const EnrolledSchema = v.strictObject({
  instance: v.string(),
  resourceServer: v.string(),
  clientId: v.pipe(v.string(), v.description('`<resource server>/<instance>`: the user of its HTTP Basic.')),
  clientSecret: v.pipe(v.string(), v.description('`fai_…`: shown this once, kept as its SHA-256.')),
})
