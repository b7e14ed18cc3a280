import type { MetricsExposition, ResponseSample } from '@flowadmin/adapter-http'
import type { CoreObserver, DomainEvent, EventSink, Stores, TokenKind } from '@flowadmin/core'
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'

/** Every login outcome, each exported from the start (at 0) so that rates and alerts work at once. */
export const LOGIN_OUTCOMES = ['succeeded', 'failed', 'throttled', 'shed'] as const

/** What the server measures, in one Prometheus registry of its own. */
export interface Metrics {
  /** Counts logins by outcome and module changes, from the core's events. */
  events: EventSink
  /** Observes a response of the HTTP app. */
  onResponse(sample: ResponseSample): void
  /** What the core measures of itself: each login's wait in the verifier queue. */
  observer: CoreObserver
  /** The same stores, each call timed and each throw counted. */
  instrument<S extends Stores>(stores: S): S
  /** Where the gauges read at each scrape come from, once the service is wired. */
  track(sources: MetricsSources): void
  /** Every metric in the Prometheus text format. */
  exposition(): Promise<MetricsExposition>
}

export interface MetricsSources {
  /** Live access tokens now, by kind, from the store. */
  liveTokens: () => Promise<Record<TokenKind, number>>
  /** Verifications running and logins waiting for one, by lane, now. */
  verifierLoad: () => { running: number; known: number; general: number }
}

/** Seconds: from a cheap route (tens of microseconds) to a login under load. */
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
/** Seconds: a store call is sub-millisecond on SQLite, a few on a network database. */
const STORAGE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]

/**
 * The server's metrics: the default process metrics of prom-client (CPU, memory, handles,
 * event-loop delay, GC) and flowadmin's own, all prefixed `flowadmin_`. Label values come from
 * fixed sets (route templates, event types, port method names), never from a request.
 */
export function createMetrics(): Metrics {
  let sources: MetricsSources = {
    liveTokens: async () => ({ session: 0, api: 0 }),
    verifierLoad: () => ({ running: 0, known: 0, general: 0 }),
  }
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })

  const requests = new Histogram({
    name: 'flowadmin_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method, route template and status.',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: HTTP_BUCKETS,
    registers: [registry],
  })
  const logins = new Counter({
    name: 'flowadmin_logins_total',
    help: 'Login attempts (POST /auth/token with well-formed fields), by outcome.',
    labelNames: ['outcome'] as const,
    registers: [registry],
  })
  for (const outcome of LOGIN_OUTCOMES) logins.inc({ outcome }, 0)
  const moduleChanges = new Counter({
    name: 'flowadmin_module_changes_total',
    help: 'Modules or node sets enabled or disabled through the API, by change.',
    labelNames: ['change'] as const,
    registers: [registry],
  })
  for (const change of ['enabled', 'disabled']) moduleChanges.inc({ change }, 0)
  const permissionDenied = new Counter({
    name: 'flowadmin_permission_denied_total',
    help: 'Requests refused because the token lacked the permission.',
    registers: [registry],
  })
  new Gauge({
    name: 'flowadmin_verifier_queue_depth',
    help: 'Logins waiting for a password verification, by lane (known clients, general).',
    labelNames: ['lane'] as const,
    registers: [registry],
    collect() {
      const { known, general } = sources.verifierLoad()
      this.set({ lane: 'known' }, known)
      this.set({ lane: 'general' }, general)
    },
  })
  new Gauge({
    name: 'flowadmin_verifier_running',
    help: 'Password verifications running now.',
    registers: [registry],
    collect() {
      this.set(sources.verifierLoad().running)
    },
  })
  const verifierWait = new Histogram({
    name: 'flowadmin_verifier_wait_seconds',
    help: 'Time a login waited in the verifier queue before its password verification started.',
    buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  })
  const storageErrors = new Counter({
    name: 'flowadmin_storage_errors_total',
    help: 'Store calls that failed (the storage threw), by store and operation.',
    labelNames: ['store', 'operation'] as const,
    registers: [registry],
  })
  new Gauge({
    name: 'flowadmin_tokens_live',
    help: 'Access tokens that have not expired, by kind (session or api), counted in the store at each scrape.',
    labelNames: ['kind'] as const,
    registers: [registry],
    async collect() {
      try {
        for (const [kind, live] of Object.entries(await sources.liveTokens())) this.set({ kind }, live)
      } catch {
        // The failure is counted as a storage error; the other metrics still answer.
      }
    },
  })
  const storage = new Histogram({
    name: 'flowadmin_storage_operation_duration_seconds',
    help: 'Time of a store call, by store and operation.',
    labelNames: ['store', 'operation'] as const,
    buckets: STORAGE_BUCKETS,
    registers: [registry],
  })

  const instrumentStore = <T extends object>(store: string, target: T): T => {
    const wrappers = new Map<PropertyKey, unknown>()
    return new Proxy(target, {
      get(object, operation, receiver) {
        const value = Reflect.get(object, operation, receiver)
        if (typeof value !== 'function' || typeof operation !== 'string') return value
        const cached = wrappers.get(operation) as { of: unknown; call: unknown } | undefined
        if (cached?.of === value) return cached.call
        const labels = { store, operation }
        const call = async (...args: unknown[]) => {
          const stop = storage.startTimer(labels)
          try {
            return await value.apply(object, args)
          } catch (error) {
            storageErrors.inc(labels)
            throw error
          } finally {
            stop()
          }
        }
        wrappers.set(operation, { of: value, call })
        return call
      },
    })
  }

  return {
    events: {
      emit(event: DomainEvent) {
        if (event.type.startsWith('login.')) logins.inc({ outcome: event.type.slice('login.'.length) })
        else if (event.type === 'module.enabled') moduleChanges.inc({ change: 'enabled' })
        else if (event.type === 'module.disabled') moduleChanges.inc({ change: 'disabled' })
        else if (event.type === 'permission.denied') permissionDenied.inc()
      },
    },
    onResponse({ method, route, status, seconds }) {
      requests.observe({ method, route, status: String(status) }, seconds)
    },
    observer: {
      verifierWait(milliseconds) {
        verifierWait.observe(milliseconds / 1000)
      },
    },
    instrument(stores) {
      return {
        ...stores,
        tokens: instrumentStore('tokens', stores.tokens),
        modules: instrumentStore('modules', stores.modules),
        throttle: instrumentStore('throttle', stores.throttle),
      }
    },
    track(next) {
      sources = next
    },
    async exposition() {
      return { contentType: registry.contentType, body: await registry.metrics() }
    },
  }
}

/** Sends each event to every sink; one that throws does not keep the others from it. */
export function fanOut(...sinks: EventSink[]): EventSink {
  return {
    emit(event) {
      for (const sink of sinks) {
        try {
          sink.emit(event)
        } catch {
          // A sink must not throw into the request that caused the event.
        }
      }
    },
  }
}

/**
 * The metrics listener's whole app: `GET /metrics` (and HEAD), nothing else. It needs no token,
 * which is why it listens on loopback only.
 */
export function metricsFetch(metrics: Pick<Metrics, 'exposition'>): (request: Request) => Promise<Response> {
  return async (request) => {
    const { pathname } = new URL(request.url)
    if (pathname !== '/metrics') return new Response(null, { status: 404 })
    if (request.method !== 'GET' && request.method !== 'HEAD') {
      return new Response(null, { status: 405, headers: { Allow: 'GET, HEAD' } })
    }
    const { contentType, body } = await metrics.exposition()
    return new Response(request.method === 'HEAD' ? null : body, {
      headers: {
        'Content-Type': contentType,
        'Cache-Control': 'no-store',
        'X-Content-Type-Options': 'nosniff',
      },
    })
  }
}
