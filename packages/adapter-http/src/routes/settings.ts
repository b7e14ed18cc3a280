import { Hono } from 'hono'
import * as v from 'valibot'
import { requirePermission } from '../auth.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { accessDocs, describe, json } from '../openapi.js'
import { Permissions } from '../schemas.js'

/** `GET /settings` 200. */
const Settings = v.strictObject({
  version: v.string(),
  user: v.union([
    v.strictObject({ username: v.string(), permissions: Permissions }),
    v.strictObject({ anonymous: v.literal(true), permissions: Permissions }),
  ]),
})

/** `GET /settings`: the product version and who the caller is. */
export function settingsRoutes(deps: RouteDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  const { needs, guarded } = accessDocs(deps)

  routes.get(
    '/settings',
    describe({
      operationId: 'getSettings',
      summary: 'The product version and who the caller is',
      description: needs('settings.read'),
      tags: ['settings'],
      responses: guarded({ 200: { description: 'The settings.', content: json(Settings) } }),
    }),
    requirePermission(deps, 'settings.read'),
    (c) => {
      const principal = c.get('principal')
      const user =
        principal.kind === 'user'
          ? { username: principal.username, permissions: principal.permissions }
          : { anonymous: true, permissions: principal.permissions }
      return c.json({ version: deps.version, user })
    },
  )

  return routes
}
