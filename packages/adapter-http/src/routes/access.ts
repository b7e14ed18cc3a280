import { Hono } from 'hono'
import * as v from 'valibot'
import { requirePermission, requirePerson } from '../auth.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { signedInRefusal } from '../errors.js'
import { noStore } from '../no-store.js'
import { describe, json, NO_STORE, signedInAnswers } from '../openapi.js'
import { Permissions } from '../schemas.js'

const Scope = v.pipe(
  v.string(),
  v.description('`everywhere`, `flowadmin` (its own API) or a group of instances (`fleet.groups`).'),
)

/** `GET /auth/access` 200. */
const AccessSchema = v.strictObject({
  username: v.string(),
  grants: v.pipe(
    v.array(
      v.union([
        v.strictObject({ role: v.string(), on: Scope }),
        v.strictObject({ permissions: Permissions, on: Scope }),
      ]),
    ),
    v.description(
      'The person’s grants: roles on scopes, and permissions (a user’s `permissions` are on `everywhere`).',
    ),
  ),
  roles: v.pipe(
    v.record(
      v.string(),
      v.strictObject({
        permissions: Permissions,
        maxTokenLifetime: v.pipe(
          v.nullable(v.number()),
          v.description('Seconds: a token older than this no longer has the role’s rights; null: no limit.'),
        ),
      }),
    ),
    v.description('The roles the grants name, as the settings define them now.'),
  ),
  scopes: v.pipe(
    v.record(v.string(), Permissions),
    v.description(
      'What the token in use may do now on each scope: `everywhere` (any instance), `flowadmin`, and each group (an instance of that group). A scope where it may do nothing is absent. At an instance of several groups, the union of theirs.',
    ),
  ),
})

/** `GET /auth/grants` 200. */
const HoldingsSchema = v.strictObject({
  grants: v.pipe(
    v.array(
      v.strictObject({
        kind: v.pipe(
          v.picklist(['user', 'identity-provider-group', 'directory-group', 'api-token']),
          v.description(
            'Who holds it: a user of `adminAuth.users`, a group of `adminAuth.oidc.permissions.map` or `adminAuth.ldap.permissions.map`, or an API token.',
          ),
        ),
        holder: v.pipe(v.string(), v.description('The username, the group’s name, or the API token’s name.')),
        owner: v.pipe(v.nullable(v.string()), v.description('An API token’s owner; null for the others.')),
        role: v.pipe(v.nullable(v.string()), v.description('The role; null for permissions given as such.')),
        permissions: v.pipe(
          Permissions,
          v.description(
            'The role’s permissions now (none for a role the settings no longer have), or those given.',
          ),
        ),
        on: Scope,
        from: v.pipe(
          v.picklist(['settings', 'token']),
          v.description(
            '`settings`: the settings file decides it (read again on a reload); `token`: an API token’s scope.',
          ),
        ),
      }),
    ),
    v.description(
      'The users in the settings’ order, then the identity provider’s groups, the directory’s and the API tokens, each by name.',
    ),
  ),
})

/**
 * `GET /auth/access`: the caller's own grants, roles and rights on each scope; `GET /auth/grants`:
 * everyone's, for `*` on flowadmin. Only when auth is on.
 */
export function accessRoutes(deps: RouteDeps): Hono<AppEnv> {
  const { core } = deps
  const routes = new Hono<AppEnv>()
  if (!core.authEnabled) return routes

  routes.get(
    '/auth/access',
    describe({
      operationId: 'getAccess',
      summary: 'The caller’s own access: grants, roles and what the token may do on each scope',
      tags: ['auth'],
      responses: {
        200: { description: 'The caller’s access.', ...NO_STORE, content: json(AccessSchema) },
        ...signedInAnswers(),
      },
    }),
    noStore,
    requirePerson(deps),
    (c) => c.json(core.accessOf(c.get('person'))),
  )

  routes.get(
    '/auth/grants',
    describe({
      operationId: 'listGrants',
      summary: 'Who holds which role where: every grant of the settings and of the API tokens',
      description:
        'Needs `*` on flowadmin (else 401 `insufficient_scope`, as every route a right is missing for). Each user’s ' +
        'permissions (on `everywhere`) and grants, each group of the identity provider’s and the directory’s maps, ' +
        'and each unexpired API token whose scope carries a role or a permission on a scope.',
      tags: ['auth'],
      responses: {
        200: { description: 'Every grant.', ...NO_STORE, content: json(HoldingsSchema) },
        ...signedInAnswers(),
      },
    }),
    noStore,
    requirePermission(deps, '*'),
    async (c) => {
      const listed = await core.holdings(c.get('principal'))
      return listed.ok ? c.json({ grants: listed.value }) : signedInRefusal(listed.error)
    },
  )

  return routes
}
