import { Hono } from 'hono'
import { requirePermission } from '../auth.js'
import type { AppEnv, RouteDeps } from '../env.js'

/** `GET /settings`: the product version and who the caller is. */
export function settingsRoutes(deps: RouteDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()

  routes.get('/settings', requirePermission(deps, 'settings.read'), (c) => {
    const principal = c.get('principal')
    const user =
      principal.kind === 'user'
        ? { username: principal.username, permissions: principal.permissions }
        : { anonymous: true, permissions: principal.permissions }
    return c.json({ version: deps.version, user })
  })

  return routes
}
