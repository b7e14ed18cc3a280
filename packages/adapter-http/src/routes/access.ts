import { Hono } from 'hono'
import * as v from 'valibot'
import { requirePerson } from '../auth.js'
import type { AppEnv, RouteDeps } from '../env.js'
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

/** `GET /auth/access`: the caller's own grants, roles and rights on each scope. Only when auth is on. */
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

  return routes
}
