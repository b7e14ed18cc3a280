import { Hono } from 'hono'
import type { AppEnv, RouteDeps } from '../env.js'
import { createOpenApiDocument } from '../openapi.js'

/** `GET /openapi.json`: the document of this app, open to anyone like `GET /auth/login`. */
export function openApiRoutes(deps: RouteDeps): Hono<AppEnv> {
  const document = createOpenApiDocument({
    version: deps.version,
    basePath: deps.basePath,
    authEnabled: deps.core.authEnabled,
    metrics: deps.metrics,
  })
  return new Hono<AppEnv>().get('/openapi.json', (c) => c.json(document))
}
