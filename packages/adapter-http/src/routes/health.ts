import { Hono } from 'hono'
import { requirePermission } from '../auth.js'
import type { AppEnv, RouteDeps } from '../env.js'

/** The answer of a readiness check: null when ready, else a short reason code such as `storage_unavailable`. */
export type Readiness = () => Promise<string | null>

/** A metrics exposition, e.g. Prometheus' text format. */
export interface MetricsExposition {
  contentType: string
  body: string
}

/** Longest a readiness check may take before `/readyz` answers 503 `check_timeout`. */
export const READINESS_TIMEOUT_MS = 2_000

const NO_STORE = { 'Cache-Control': 'no-store' }

/** Runs the check within the timeout; a throw or a timeout is a reason like any other. */
async function checkReadiness(readiness: Readiness): Promise<string | null> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve('check_timeout'), READINESS_TIMEOUT_MS)
  })
  try {
    return await Promise.race([readiness().catch(() => 'check_failed'), timeout])
  } finally {
    clearTimeout(timer)
  }
}

/**
 * `GET /healthz` (the process answers), `GET /readyz` (the service can do its work) and, when
 * `metrics` is given, `GET /metrics` (needs `metrics.read`). Health answers carry no detail: no
 * version, path or address, only a status and, when not ready, a reason code.
 */
export function healthRoutes(
  deps: RouteDeps,
  readiness: Readiness | undefined,
  metrics: (() => Promise<MetricsExposition>) | undefined,
): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  routes.get('/healthz', (c) => c.json({ status: 'ok' }, 200, NO_STORE))
  routes.get('/readyz', async (c) => {
    const reason = readiness === undefined ? null : await checkReadiness(readiness)
    return reason === null
      ? c.json({ status: 'ready' }, 200, NO_STORE)
      : c.json({ status: 'not_ready', reason }, 503, NO_STORE)
  })
  if (metrics !== undefined) {
    routes.get('/metrics', requirePermission(deps, 'metrics.read'), async (c) => {
      const { contentType, body } = await metrics()
      return c.body(body, 200, { ...NO_STORE, 'Content-Type': contentType })
    })
  }
  return routes
}
