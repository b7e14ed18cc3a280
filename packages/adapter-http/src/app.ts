import { type Core, isStoreUnavailable } from '@flowadmin/core'
import { type Context, Hono } from 'hono'
import { matchedRoutes } from 'hono/route'
import { type CorsOptions, cors } from './cors.js'
import type { RouteDeps } from './env.js'
import { emptyResponse, thrownAnswer, toResponse } from './errors.js'
import { createFleetSignals, type FleetSignals } from './fleet-signals.js'
import { accessRoutes } from './routes/access.js'
import { auditRoutes } from './routes/audit.js'
import { authRoutes } from './routes/auth.js'
import { fleetRoutes } from './routes/fleet.js'
import { groupRoutes } from './routes/groups.js'
import { healthRoutes, type MetricsExposition, type Readiness } from './routes/health.js'
import { introspectRoutes } from './routes/introspect.js'
import { mfaRoutes } from './routes/mfa.js'
import { nodesRoutes } from './routes/nodes.js'
import { openApiRoutes, type RoutesOf } from './routes/openapi.js'
import { passkeyRoutes } from './routes/passkeys.js'
import { rolloutRoutes } from './routes/rollouts.js'
import { settingsRoutes } from './routes/settings.js'
import { signInRoutes } from './routes/signin.js'
import { snapshotRoutes } from './routes/snapshots.js'
import { ssoRoutes } from './routes/sso.js'
import { tokensRoutes } from './routes/tokens.js'

/** Options of {@link createHttpApp}. */
export interface HttpAppOptions {
  /** Product version reported by GET /settings. */
  version: string
  /** Mount every route below this prefix (`httpAdminRoot`), e.g. '/admin'. Default '' (root). */
  basePath?: string
  /** The client's address for throttling and events. The adapter does no I/O, so the server
   *  passes a function (it uses @hono/node-server's getConnInfo). Default: () => 'unknown'. */
  clientAddress?: (c: Context) => string
  /** Largest accepted request body in bytes; larger is 413. Default 64 KiB. */
  maxBodyBytes?: number
  /** Largest module tarball upload (`POST /nodes`, multipart) in bytes; larger is 413. Default 20 MiB. */
  maxUploadBytes?: number
  /** Called with every unexpected error (the 500 path). Default: console.error. */
  onUnexpectedError?: (error: unknown, c: Context) => void
  /**
   * Called when a store could not answer (its database is unreachable or timed out); the client
   * gets 503 `storage_unavailable` with `Retry-After`. Default: nothing is reported.
   */
  onStorageUnavailable?: (error: unknown, c: Context) => void
  /** Browser origins allowed to call the API. Default: none, and no CORS header is ever sent. */
  cors?: CorsOptions
  /**
   * Readiness behind `GET /readyz`: resolves null when the service can do its work, else a short
   * reason code (`storage_unavailable`). Default: always ready.
   */
  readiness?: Readiness
  /** Serves `GET /metrics` (needs `metrics.read`) with what this returns. Default: no such route. */
  metrics?: () => Promise<MetricsExposition>
  /** Called after every response with its route template (never the raw path), status and duration. */
  onResponse?: (sample: ResponseSample) => void
  /**
   * The redirect URI registered at the identity provider (`adminAuth.oidc.redirectUri`). Default:
   * the origin the browser used, then `<basePath>/auth/strategy/callback`.
   */
  ssoRedirectUri?: string | undefined
  /**
   * The address of the sign-in page's passkey script (the console serves it at
   * `<basePath>/signin.js`). Without it the page offers no passkey button.
   */
  signInScript?: string | undefined
  /**
   * Fleet mode: how the instances' long polls learn that the desired state changed, and the
   * answers of changes that instances reported (the server tells them of what happens at other
   * flowadmin instances, and closes them). Default: its own, which checks the revision every
   * second while polls wait.
   */
  fleet?: FleetSignals | undefined
}

/** One answered request, as `onResponse` receives it. */
export interface ResponseSample {
  method: string
  /** The route's template below the base path, e.g. `/nodes/*`; `unmatched` when no route matched. */
  route: string
  status: number
  /** From the request reaching the app to its response being ready. */
  seconds: number
}

/** Default largest request body: 64 KiB. */
export const DEFAULT_MAX_BODY_BYTES = 64 * 1024
/** Default largest module upload: 20 MiB. */
export const DEFAULT_MAX_UPLOAD_BYTES = 20 * 1024 * 1024

/**
 * The API's root (`httpAdminRoot`) as every part of the service uses it: '' or a path with a
 * leading slash and none at the end. '', '/', '/admin', 'admin/' -> '', '', '/admin', '/admin'.
 */
export function normaliseBasePath(basePath: string): string {
  const trimmed = basePath.replace(/\/+$/, '')
  if (trimmed === '') return ''
  return trimmed.startsWith('/') ? trimmed : `/${trimmed}`
}

/**
 * The admin API as a Hono app over a core. It does no I/O of its own: serve its `fetch`, or
 * call `app.request()`.
 */
export function createHttpApp(core: Core, options: HttpAppOptions): Hono {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  if (!Number.isSafeInteger(maxBodyBytes) || maxBodyBytes < 0) {
    throw new RangeError('maxBodyBytes must be a whole number of bytes')
  }
  const maxUploadBytes = options.maxUploadBytes ?? DEFAULT_MAX_UPLOAD_BYTES
  if (!Number.isSafeInteger(maxUploadBytes) || maxUploadBytes < 0) {
    throw new RangeError('maxUploadBytes must be a whole number of bytes')
  }
  const deps: RouteDeps = {
    core,
    maxUploadBytes,
    version: options.version,
    basePath: normaliseBasePath(options.basePath ?? ''),
    clientAddress: options.clientAddress ?? (() => 'unknown'),
    maxBodyBytes,
    metrics: options.metrics !== undefined,
    ssoRedirectUri: options.ssoRedirectUri,
    signInScript: options.signInScript,
    fleet: options.fleet ?? (core.fleet === null ? undefined : createFleetSignals(core.fleet)),
  }
  const report = options.onUnexpectedError ?? ((error: unknown) => console.error(error))
  const unexpected = (error: unknown, c: Context): Response => {
    const unavailable = isStoreUnavailable(error)
    try {
      if (unavailable) options.onStorageUnavailable?.(error, c)
      else report(error, c)
    } catch {
      // A failing logger must not turn a 500 or 503 into something else.
    }
    return toResponse(thrownAnswer(error))
  }

  const api = new Hono()
    .route('/', authRoutes(deps))
    .route('/', ssoRoutes(deps))
    .route('/', signInRoutes(deps))
    .route('/', tokensRoutes(deps))
    .route('/', mfaRoutes(deps))
    .route('/', accessRoutes(deps))
    .route('/', groupRoutes(deps))
    .route('/', snapshotRoutes(deps))
    .route('/', rolloutRoutes(deps))
    .route('/', passkeyRoutes(deps))
    .route('/', introspectRoutes(deps))
    .route('/', settingsRoutes(deps))
    .route('/', nodesRoutes(deps))
    .route('/', auditRoutes(deps))
    .route('/', fleetRoutes(deps))
    .route(
      '/',
      openApiRoutes(deps, (): RoutesOf => api),
    )
    .route('/', healthRoutes(deps, options.readiness, options.metrics))

  const app = new Hono()
  const { onResponse } = options
  // One outer middleware, the only one every request passes besides the route's own: it sets
  // nosniff, turns what a handler throws into an answer, and reports the response when asked.
  app.use(async (c, next) => {
    const started = onResponse === undefined ? 0 : performance.now()
    // Set before the handler runs, so responses made through `c` carry it from the start: adding
    // a header to a finished response would copy it, which halves the rate of the cheap routes
    // (so not hono/secure-headers, which sets its headers after the handler).
    // Responses made without `c` (errors.ts) set it themselves.
    c.header('X-Content-Type-Options', 'nosniff')
    try {
      await next()
    } catch (error) {
      // Hono hands thrown Errors to onError; anything else thrown ends up here.
      c.res = unexpected(error, c)
    }
    if (onResponse !== undefined) reportResponse(onResponse, c, deps.basePath, started)
  })
  if (options.cors !== undefined) app.use(cors(options.cors))
  app.route(deps.basePath === '' ? '/' : deps.basePath, api)
  app.notFound(() => emptyResponse(404))
  app.onError(unexpected)
  return app
}

/** The route template that answered, below `basePath`: the last matched route that is not middleware. */
function routeTemplate(c: Context, basePath: string): string {
  const routes = matchedRoutes(c)
  for (let index = routes.length - 1; index >= 0; index--) {
    const route = routes[index] as { method: string; path: string }
    if (route.method !== 'ALL') return route.path.slice(basePath.length) || '/'
  }
  return 'unmatched'
}

/** Reports an answered request: its route template, status and time since `started`. */
function reportResponse(
  onResponse: (sample: ResponseSample) => void,
  c: Context,
  basePath: string,
  started: number,
) {
  try {
    onResponse({
      method: c.req.method,
      route: routeTemplate(c, basePath),
      status: c.res.status,
      seconds: (performance.now() - started) / 1000,
    })
  } catch {
    // Metrics must never change an answer.
  }
}
