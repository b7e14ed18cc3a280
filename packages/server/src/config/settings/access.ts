// Who may do what where: `adminAuth.roles` (named permission sets, each with an optional lifetime),
// `fleet.groups` (groups of instances by id patterns), and grants (a role on a scope) on users and
// in the identity provider's and the directory's group maps. A grant must name a role and a group
// there are: checked across the sections once each has passed its own schema.
import {
  BUILT_IN_ROLES,
  type Grant,
  type GroupRules,
  grantProblem,
  groupNameProblem,
  groupPatternProblem,
  ROLE_NAME_FORM,
  type RoleOptions,
} from '@flowadmin/core'
import * as v from 'valibot'
import {
  type FieldProblem,
  issueOf,
  permissions,
  permissionWord,
  strictObject,
  text,
  whole,
} from './fields.js'

/** The roles and groups the server runs with (absent sections: none beyond the built-in roles). */
export interface AccessSettings {
  roles: Record<string, RoleOptions>
  groups: GroupRules
}

/** Most groups, roles and grants of one list the settings may hold: bounds, not advice. */
const MAX_ENTRIES = 1000

/** A scope: `everywhere`, `flowadmin` or a group's name. */
const scope = v.pipe(
  text('"everywhere", "flowadmin" or a group of fleet.groups'),
  issueOf((on) =>
    on === 'everywhere' || on === 'flowadmin' || groupNameProblem(on) === null
      ? null
      : `${on.slice(0, 64)} is not a scope: "everywhere", "flowadmin" or a group's name`,
  ),
)

/** One grant: `{ role, on }`. */
export const grant = strictObject({
  role: v.pipe(
    text('a role: viewer, deployer, palette-admin, admin or one of adminAuth.roles'),
    v.regex(ROLE_NAME_FORM, 'is not a role name (letters, digits, ".", "_" or "-")'),
  ),
  on: scope,
})

export const grants = v.pipe(
  v.array(grant, 'must be a list of grants ({ role, on })'),
  v.maxLength(MAX_ENTRIES, `must list at most ${MAX_ENTRIES} grants`),
)

/** What one group of the identity provider or the directory gives: permissions, grants, or both. */
export const groupRights = v.union(
  [
    permissionWord,
    v.pipe(
      v.array(v.union([permissionWord, grant], 'each must be a permission or a grant ({ role, on })')),
      v.nonEmpty('must list at least one permission or grant'),
    ),
  ],
  'must be a permission, or a non-empty list of permissions and grants (e.g. "read" or [{ "role": "deployer", "on": "line-1" }])',
)

/** `adminAuth.roles`: each role's permissions and, optionally, the longest a token may use it (seconds). */
export const roles = v.pipe(
  v.record(
    v.pipe(v.string(), v.regex(ROLE_NAME_FORM, 'a role name is letters, digits, ".", "_" or "-"')),
    strictObject({ permissions, maxTokenLifetime: v.optional(whole(1, 31_536_000)) }),
    'must map role names to { permissions, maxTokenLifetime }',
  ),
  v.check((map) => Object.keys(map).length <= MAX_ENTRIES, `must hold at most ${MAX_ENTRIES} roles`),
)

/** `fleet.groups`: each group's instance id patterns (`*` any characters, `?` one). */
export const groups = v.pipe(
  v.record(
    v.pipe(v.string(), issueOf(groupNameProblem)),
    v.pipe(
      v.array(
        v.pipe(v.string('must be a string'), issueOf(groupPatternProblem)),
        'must be a list of instance id patterns',
      ),
      v.maxLength(MAX_ENTRIES, `must list at most ${MAX_ENTRIES} patterns`),
    ),
    'must map group names to lists of instance id patterns (e.g. { "line-1": ["press-*", "nr-7"] })',
  ),
  v.check((map) => Object.keys(map).length <= MAX_ENTRIES, `must hold at most ${MAX_ENTRIES} groups`),
)

/** Where grants sit in the settings, each with its field's name for a message. */
export interface GrantSources {
  users: ReadonlyArray<{ grants?: readonly Grant[] | undefined }>
  oidc?: Readonly<Record<string, string | ReadonlyArray<string | Grant>>> | undefined
  ldap?: Readonly<Record<string, string | ReadonlyArray<string | Grant>>> | undefined
}

/**
 * The roles and groups, once every grant was found to name a role and a group there are: the first
 * that does not is refused, naming its field and what it names.
 */
export function accessOf(
  parsed: { roles?: Record<string, RoleOptions> | undefined; groups?: GroupRules | undefined },
  sources: GrantSources,
  problem: FieldProblem,
): AccessSettings {
  const access: AccessSettings = { roles: parsed.roles ?? {}, groups: parsed.groups ?? {} }
  const known = {
    roles: new Set([...Object.keys(BUILT_IN_ROLES), ...Object.keys(access.roles)]),
    groups: new Set(Object.keys(access.groups)),
  }
  const check = (field: string, each: Grant) => {
    const wrong = grantProblem(each, known)
    if (wrong !== null) throw problem(field, wrong)
  }
  sources.users.forEach((user, i) => {
    user.grants?.forEach((each, j) => {
      check(`adminAuth.users[${i}].grants[${j}]`, each)
    })
  })
  for (const [section, map] of [
    ['adminAuth.oidc.permissions.map', sources.oidc],
    ['adminAuth.ldap.permissions.map', sources.ldap],
  ] as const) {
    for (const [group, rights] of Object.entries(map ?? {})) {
      if (typeof rights === 'string') continue
      rights.forEach((each, j) => {
        if (typeof each !== 'string') check(`${section}[${JSON.stringify(group)}][${j}]`, each)
      })
    }
  }
  return access
}
