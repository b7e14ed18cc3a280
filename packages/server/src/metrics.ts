import type { MetricsExposition, ResponseSample } from '@flowadmin/adapter-http'
import type { CoreObserver, DomainEvent, EventSink, Stores, TokenKind } from '@flowadmin/core'
import { Counter, collectDefaultMetrics, Gauge, Histogram, type Metric, Registry } from 'prom-client'

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

  const requests = createAggregatedHistogram({
    name: 'flowadmin_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by method, route template and status.',
    labelNames: ['method', 'route', 'status'],
    buckets: HTTP_BUCKETS,
  })
  registry.registerMetric(requests.metric as unknown as Metric)
  const requestTimings = new Map<string, AggregatedChild>()
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
  const storage = createAggregatedHistogram({
    name: 'flowadmin_storage_operation_duration_seconds',
    help: 'Time of a store call, by store and operation.',
    labelNames: ['store', 'operation'],
    buckets: STORAGE_BUCKETS,
  })
  registry.registerMetric(storage.metric as unknown as Metric)

  const instrumentStore = <T extends object>(store: string, target: T): T => {
    // Wrapped once, up front; each call looks its method up on the store, so a store that swaps
    // a method is still the one called.
    const wrapped = Object.create(target) as Record<string, unknown>
    for (const operation of methodNames(target)) {
      const timing = storage.child([store, operation])
      const failed = () => storageErrors.inc({ store, operation })
      wrapped[operation] = (...args: unknown[]) => {
        const started = performance.now()
        let result: unknown
        try {
          result = (target as Record<string, (...a: unknown[]) => unknown>)[operation]?.(...args)
        } catch (error) {
          timing.observe((performance.now() - started) / 1000)
          failed()
          throw error
        }
        if (!(result instanceof Promise)) {
          timing.observe((performance.now() - started) / 1000)
          return result
        }
        return result.then(
          (value) => {
            timing.observe((performance.now() - started) / 1000)
            return value
          },
          (error: unknown) => {
            timing.observe((performance.now() - started) / 1000)
            failed()
            throw error
          },
        )
      }
    }
    return wrapped as T
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
      const key = `${method} ${status} ${route}`
      let timing = requestTimings.get(key)
      if (timing === undefined) {
        timing = requests.child([method, route, String(status)])
        requestTimings.set(key, timing)
      }
      timing.observe(seconds)
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

/** The own and inherited methods of a store object (not Object's). */
function methodNames(target: object): string[] {
  const names = new Set<string>()
  for (
    let object = target;
    object !== null && object !== Object.prototype;
    object = Object.getPrototypeOf(object)
  ) {
    for (const name of Object.getOwnPropertyNames(object)) {
      if (name !== 'constructor' && typeof (target as Record<string, unknown>)[name] === 'function')
        names.add(name)
    }
  }
  return [...names]
}

interface AggregatedChild {
  observe(seconds: number): void
}

/**
 * A Prometheus histogram for the hot paths (every request, every store call): each label set
 * is looked up once by its caller and keeps plain counts, so an observation is a bucket search
 * and three additions. prom-client's own Histogram hashes the labels on every observation, which
 * costs more than the store call it times. Exported through the same registry, in the same
 * format (cumulative `_bucket` series with `le`, `_sum`, `_count`).
 */
function createAggregatedHistogram(options: {
  name: string
  help: string
  labelNames: readonly string[]
  buckets: readonly number[]
}) {
  const { name, help, labelNames, buckets } = options
  const children: Array<{
    labels: Record<string, string>
    counts: Float64Array
    sum: number
    count: number
  }> = []
  return {
    child(values: readonly string[]): AggregatedChild {
      const labels = Object.fromEntries(labelNames.map((label, index) => [label, values[index] ?? '']))
      const state = { labels, counts: new Float64Array(buckets.length), sum: 0, count: 0 }
      children.push(state)
      return {
        observe(seconds) {
          let index = 0
          while (index < buckets.length && seconds > (buckets[index] as number)) index++
          if (index < buckets.length) state.counts[index] = (state.counts[index] as number) + 1
          state.sum += seconds
          state.count++
        },
      }
    },
    /**
     * What prom-client's registry reads at each scrape: its name, help and type, and `get()`
     * (the registry needs nothing else of a metric to write it out).
     */
    metric: {
      name,
      help,
      type: 'histogram' as const,
      aggregator: 'sum' as const,
      get() {
        const values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> =
          []
        for (const { labels, counts, sum, count } of children) {
          let cumulative = 0
          buckets.forEach((le, index) => {
            cumulative += counts[index] as number
            values.push({ metricName: `${name}_bucket`, labels: { le, ...labels }, value: cumulative })
          })
          values.push({ metricName: `${name}_bucket`, labels: { le: '+Inf', ...labels }, value: count })
          values.push({ metricName: `${name}_sum`, labels, value: sum })
          values.push({ metricName: `${name}_count`, labels, value: count })
        }
        return { name, help, type: 'histogram' as const, values, aggregator: 'sum' as const }
      },
      reset() {
        for (const child of children) {
          child.counts.fill(0)
          child.sum = 0
          child.count = 0
        }
      },
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
