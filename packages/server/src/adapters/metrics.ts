import type { MetricsExposition, ResponseSample } from '@flowadmin/adapter-http'
import type { CoreObserver, DomainEvent, EventSink, Stores, TokenKind } from '@flowadmin/core'
import type { Registry } from 'prom-client'
import {
  type AggregatedChild,
  createAggregatedHistogram,
  createGauge,
  createCounter as createOwnCounter,
  type OwnMetric,
  type Sample,
} from './own-metrics.js'

/** Every login outcome, each exported from the start (at 0) so that rates and alerts work at once. */
export const LOGIN_OUTCOMES = ['succeeded', 'failed', 'throttled', 'shed', 'mfa_required'] as const
export const INTROSPECTION_OUTCOMES = ['active', 'inactive', 'invalid_client', 'throttled', 'shed'] as const
/** How asking the directory ended (see DirectoryOutcome). */
export const DIRECTORY_OUTCOMES = ['verified', 'refused', 'unavailable'] as const

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
  loginQueueLoad: () => { running: number; known: number; general: number }
  /**
   * Fleet mode: the instances in touch and not, and their drift entries, from the store; whether
   * the store's fleet settings are this flowadmin's.
   */
  fleet?:
    | (() => Promise<{ connected: number; disconnected: number; drift: number; settingsAgree: boolean }>)
    | undefined
}

/** Seconds: from a cheap route (tens of microseconds) to a login under load. */
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
/** Seconds: a store call is sub-millisecond on SQLite, a few on a network database. */
const STORAGE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1]

/**
 * The server's metrics: the default process metrics of prom-client (CPU, memory, handles,
 * event-loop delay, GC) and flowadmin's own, all prefixed `flowadmin_`. Label values come from
 * fixed sets (route templates, event types, port method names), never from a request.
 *
 * flowadmin's own metrics count in plain objects from the start; prom-client (and the tracing API
 * it loads) is loaded at the first scrape. A server that is never scraped does not carry it, and
 * its start does not wait for it. The default process metrics start then too: CPU time and memory
 * are read from the process, whole; the GC and event-loop delay figures cover the time since the
 * first scrape. At each scrape the own metrics are handed to prom-client's public API as figures
 * (see `createScraper`): nothing of its metric classes' insides is relied on.
 */
export function createMetrics(): Metrics {
  let sources: MetricsSources = {
    liveTokens: async () => ({ session: 0, api: 0 }),
    loginQueueLoad: () => ({ running: 0, known: 0, general: 0 }),
  }

  /** flowadmin's own metrics, in the order they are made here: the order of the exposition. */
  const own: OwnMetric[] = []
  const made = <T extends { metric: OwnMetric }>(created: T): T => {
    own.push(created.metric)
    return created
  }

  const requests = made(
    createAggregatedHistogram({
      name: 'flowadmin_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by method, route template and status.',
      labelNames: ['method', 'route', 'status'],
      buckets: HTTP_BUCKETS,
    }),
  )
  const requestTimings = new Map<string, AggregatedChild>()
  const logins = made(createCounter('flowadmin_logins_total'))
  const moduleChanges = made(createCounter('flowadmin_module_changes_total'))
  const introspections = made(createCounter('flowadmin_introspections_total'))
  const permissionDenied = made(createCounter('flowadmin_permission_denied_total'))
  const secondFactors = made(createCounter('flowadmin_second_factors_total'))
  made(
    createGauge({
      name: 'flowadmin_verifier_queue_depth',
      help: 'Logins waiting for a password verification, by lane (known clients, general).',
      collect() {
        const { known, general } = sources.loginQueueLoad()
        return [
          { labels: { lane: 'known' }, value: known },
          { labels: { lane: 'general' }, value: general },
        ]
      },
    }),
  )
  made(
    createGauge({
      name: 'flowadmin_verifier_running',
      help: 'Password verifications running now.',
      collect: () => [{ labels: {}, value: sources.loginQueueLoad().running }],
    }),
  )
  const verifierWait = made(
    createAggregatedHistogram({
      name: 'flowadmin_verifier_wait_seconds',
      help: 'Time a login waited in the verifier queue before its password verification started.',
      labelNames: [],
      buckets: [0.001, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    }),
  )
  const verifierWaitTiming = verifierWait.child([])
  const directoryAsks = made(createCounter('flowadmin_directory_requests_total'))
  const directoryTime = made(
    createAggregatedHistogram({
      name: 'flowadmin_directory_request_duration_seconds',
      help: 'Time the directory took to answer a sign-in or a re-check (search, bind, groups), by outcome.',
      labelNames: ['outcome'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    }),
  )
  const directoryTimings = new Map(
    DIRECTORY_OUTCOMES.map((outcome) => [outcome, directoryTime.child([outcome])]),
  )
  const storageErrors = made(createCounter('flowadmin_storage_errors_total'))
  let liveTokens: Sample[] = []
  /** Counts the live tokens, before the registry reads anything, so a failure is in this scrape. */
  const countLiveTokens = async () => {
    try {
      liveTokens = Object.entries(await sources.liveTokens()).map(([kind, live]) => ({
        labels: { kind },
        value: live,
      }))
    } catch {
      // The failure is counted as a storage error; the other metrics still answer, this one
      // with the figures of the last scrape that could count.
    }
  }
  made(
    createGauge({
      name: 'flowadmin_tokens_live',
      help: 'Access tokens that have not expired, by kind (session or api), counted in the store at each scrape.',
      collect: () => liveTokens,
    }),
  )
  let fleet: { instances: Sample[]; drift: Sample[]; agree: Sample[] } = {
    instances: [],
    drift: [],
    agree: [],
  }
  /** Fleet mode's figures, read before the registry as the live tokens are. */
  const countFleet = async () => {
    if (sources.fleet === undefined) return
    try {
      const { connected, disconnected, drift, settingsAgree } = await sources.fleet()
      fleet = {
        instances: [
          { labels: { state: 'connected' }, value: connected },
          { labels: { state: 'disconnected' }, value: disconnected },
        ],
        drift: [{ labels: {}, value: drift }],
        agree: [{ labels: {}, value: settingsAgree ? 1 : 0 }],
      }
    } catch {
      // Counted as a storage error; the figures of the last scrape that could count stay.
    }
  }
  made(
    createGauge({
      name: 'flowadmin_fleet_instances',
      help: 'Fleet mode: the Node-RED instances known, by state (connected: its poll’s lease runs).',
      collect: () => fleet.instances,
    }),
  )
  made(
    createGauge({
      name: 'flowadmin_fleet_settings_agree',
      help: 'Fleet mode: 1 when the fleet settings in the store (prune) are this flowadmin’s, 0 when another flowadmin wrote others.',
      collect: () => fleet.agree,
    }),
  )
  made(
    createGauge({
      name: 'flowadmin_fleet_drift',
      help: 'Fleet mode: modules where an instance differs from the desired state, summed over the instances.',
      collect: () => fleet.drift,
    }),
  )
  const storage = made(
    createAggregatedHistogram({
      name: 'flowadmin_storage_operation_duration_seconds',
      help: 'Time of a store call, by store and operation.',
      labelNames: ['store', 'operation'],
      buckets: STORAGE_BUCKETS,
    }),
  )

  /**
   * The scrape, made at the first one: prom-client's registry of the process metrics, and each
   * time a registry of the own metrics' figures as they stand, merged after it.
   */
  let scraper: Promise<() => Registry> | undefined
  const createScraper = async () => {
    const { AggregatorRegistry, collectDefaultMetrics, Registry } = await import('prom-client')
    const processMetrics = new Registry()
    collectDefaultMetrics({ register: processMetrics })
    // aggregate() is prom-client's public way to a registry from metrics as getMetricsAsJSON()
    // gives them (made for a cluster's workers); of one list, each figure stays as it is.
    return () =>
      Registry.merge([processMetrics, AggregatorRegistry.aggregate([own.map((metric) => metric.figures())])])
  }

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
        else if (event.type === 'permission.denied') permissionDenied.inc({})
        else if (event.type === 'mfa.succeeded' || event.type === 'mfa.failed')
          secondFactors.inc({ method: event.factor, outcome: event.type.slice('mfa.'.length) })
        else if (event.type === 'mfa.throttled') secondFactors.inc({ method: 'code', outcome: 'throttled' })
        else if (event.type === 'passkey.succeeded' || event.type === 'passkey.failed')
          secondFactors.inc({ method: 'passkey', outcome: event.type.slice('passkey.'.length) })
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
        verifierWaitTiming.observe(milliseconds / 1000)
      },
      introspection(outcome) {
        introspections.inc({ outcome })
      },
      directory(outcome, milliseconds) {
        directoryAsks.inc({ outcome })
        directoryTimings.get(outcome)?.observe(milliseconds / 1000)
      },
    },
    instrument(stores) {
      return {
        ...stores,
        tokens: instrumentStore('tokens', stores.tokens),
        modules: instrumentStore('modules', stores.modules),
        throttle: instrumentStore('throttle', stores.throttle),
        sso: instrumentStore('sso', stores.sso),
        fleet: instrumentStore('fleet', stores.fleet),
        enrolments: instrumentStore('enrolments', stores.enrolments),
        trail: instrumentStore('trail', stores.trail),
        factors: instrumentStore('factors', stores.factors),
        passkeys: instrumentStore('passkeys', stores.passkeys),
      }
    },
    track(next) {
      sources = next
    },
    async exposition() {
      // A failed load is tried again at the next scrape.
      scraper ??= createScraper().catch((error: unknown) => {
        scraper = undefined
        throw error
      })
      const scrape = await scraper
      await countLiveTokens()
      await countFleet()
      const registry = scrape()
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

/**
 * flowadmin's counters by name: their help, and the series each has from the start, at 0, so that
 * rates and alerts work at once (a storage error's labels name what failed: none is known before).
 */
const COUNTERS = {
  flowadmin_logins_total: {
    help: 'Login attempts (POST /auth/token with well-formed fields), by outcome.',
    start: LOGIN_OUTCOMES.map((outcome) => ({ outcome })),
  },
  flowadmin_module_changes_total: {
    help: 'Modules or node sets enabled or disabled through the API, by change.',
    start: [{ change: 'enabled' }, { change: 'disabled' }],
  },
  flowadmin_introspections_total: {
    help: 'Token introspections (POST /auth/introspect) by outcome: active, inactive, invalid_client, throttled, shed.',
    start: INTROSPECTION_OUTCOMES.map((outcome) => ({ outcome })),
  },
  flowadmin_directory_requests_total: {
    help: 'Questions to the directory (adminAuth.ldap): sign-ins and re-checks, by outcome (verified, refused, unavailable).',
    start: DIRECTORY_OUTCOMES.map((outcome) => ({ outcome })),
  },
  flowadmin_permission_denied_total: {
    help: 'Requests refused because the token lacked the permission.',
    start: [{}],
  },
  flowadmin_second_factors_total: {
    help: 'Second factors and passkey sign-ins checked, by method (totp, recovery_code, passkey; code: a code refused unchecked) and outcome.',
    start: [
      ...['totp', 'recovery_code', 'passkey'].flatMap((method) =>
        ['succeeded', 'failed'].map((outcome) => ({ method, outcome })),
      ),
      { method: 'code', outcome: 'throttled' },
    ],
  },
  flowadmin_storage_errors_total: {
    help: 'Store calls that failed (the storage threw), by store and operation.',
    start: [],
  },
} satisfies Record<string, { help: string; start: Array<Record<string, string>> }>

/** One of {@link COUNTERS}. */
const createCounter = (name: keyof typeof COUNTERS) => createOwnCounter(name, COUNTERS[name])
