import { Hono } from 'hono'
import * as v from 'valibot'
import { requirePermission } from '../auth.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { accessDocs, describe, json } from '../openapi.js'

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
const NO_STORE_HEADER = {
  'Cache-Control': { required: true, schema: { type: 'string' as const, enum: ['no-store'] } },
}

const Health = v.strictObject({ status: v.literal('ok') })
const Ready = v.strictObject({ status: v.literal('ready') })
const NotReady = v.strictObject({
  status: v.literal('not_ready'),
  reason: v.pipe(
    v.string(),
    v.regex(/^[a-z_]+$/),
    v.description('`storage_unavailable`, `shutting_down`, `check_timeout` or `check_failed`.'),
  ),
})

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
  const headers = NO_STORE_HEADER
  routes.get(
    '/healthz',
    describe({
      operationId: 'getHealth',
      summary: 'Whether the process answers',
      description: 'Consults nothing: for liveness probes. Needs no token.',
      tags: ['operations'],
      security: [],
      responses: { 200: { description: 'The process answers.', headers, content: json(Health) } },
    }),
    (c) => c.json({ status: 'ok' }, 200, NO_STORE),
  )
  routes.get(
    '/readyz',
    describe({
      operationId: 'getReadiness',
      summary: 'Whether the service can do its work',
      description:
        'Ready when the storage answers and no stop was asked for (the schema is migrated and the node modules discovered before the server listens). Needs no token.',
      tags: ['operations'],
      security: [],
      responses: {
        200: { description: 'Ready.', headers, content: json(Ready) },
        503: { description: 'Not ready, with a short reason code.', headers, content: json(NotReady) },
      },
    }),
    async (c) => {
      const reason = readiness === undefined ? null : await checkReadiness(readiness)
      return reason === null
        ? c.json({ status: 'ready' }, 200, NO_STORE)
        : c.json({ status: 'not_ready', reason }, 503, NO_STORE)
    },
  )
  if (metrics !== undefined) {
    const { needs, guarded } = accessDocs(deps)
    routes.get(
      '/metrics',
      describe({
        operationId: 'getMetrics',
        summary: 'Metrics in the Prometheus text format',
        description: needs('metrics.read'),
        tags: ['operations'],
        responses: guarded({
          200: {
            description: 'Every metric, in the Prometheus text exposition format 0.0.4.',
            headers,
            content: { 'text/plain': { schema: { type: 'string' as const } } },
          },
        }),
      }),
      requirePermission(deps, 'metrics.read'),
      async (c) => {
        const { contentType, body } = await metrics()
        return c.body(body, 200, { ...NO_STORE, 'Content-Type': contentType })
      },
    )
  }
  return routes
}
