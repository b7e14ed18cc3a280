/** The request as this package reads it: Node's `IncomingMessage` (and Express's) fits. */
export interface Request {
  method?: string | undefined
  url?: string | undefined
  headers: Record<string, string | string[] | undefined>
}

/** The response as this package uses it: Node's `ServerResponse` (and Express's) fits. */
export interface Response {
  once(event: 'finish' | 'close', listener: () => void): unknown
  /** A logout that can be neither revoked nor kept is answered 503 here. */
  statusCode: number
  setHeader(name: string, value: string): unknown
  end(chunk: string): unknown
}

export type NextFunction = (error?: unknown) => void

/**
 * Express middleware, as Node-RED's `httpAdminMiddleware` takes it: `(req, res, next)`, or an
 * error handler `(error, req, res, next)`. Any such function fits, whatever its parameter types.
 */
export type Middleware = (...args: never[]) => unknown

export interface FlowadminOptions {
  /** flowadmin's address, e.g. `https://flowadmin.example:1880` (a path prefix is kept). */
  url: string
  /**
   * The resource server's client id, shared by its instances (give clientSecret with it). Leave both
   * out when the instance has a credential of its own (enrolled with `enrolmentToken`); with both,
   * a credential of its own in the userDir still wins.
   */
  clientId?: string
  clientSecret?: string
  /**
   * A one-time enrolment token (`flowadmin instances enrol`): with no credential in
   * `<userDir>/.flowadmin-credential`, the instance trades it for one of its own. Default: the
   * environment variable `FLOWADMIN_ENROLMENT_TOKEN`.
   */
  enrolmentToken?: string
  /** How long an active introspection is reused, 0 to 5000 ms; a revoked token stays usable that long. Default 0. */
  cacheMs?: number
  /** The longest a login or token check waits for flowadmin, 1 to 60000 ms. Default 3000. */
  timeoutMs?: number
  /** The instance's own httpAdminMiddleware, run first. */
  middleware?: Middleware | ReadonlyArray<Middleware | ReadonlyArray<Middleware>>
  /** Where the one-line reports go (an outage, its end). Default: console.warn. */
  log?: (line: string) => void
  /** The clock of the cache, in ms. Default: Date.now. */
  now?: () => number
  /** The editor signs people in through flowadmin ("Sign in with …") instead of the login form. */
  sso?: SsoOptions
  /**
   * Accept a plain `http://` url (and `sso.url`) to a host other than this one (127.0.0.0/8,
   * [::1], localhost): the client secret, passwords and tokens then cross the network in clear.
   * Default false: such a url is refused at start.
   */
  allowInsecureHttp?: boolean
  /** auditLogger's own options. */
  audit?: AuditOptions
  /**
   * Fleet mode: this instance polls flowadmin for the fleet's desired node modules, applies them
   * through its own admin API (upgrades included), and reports its modules, the types its flows
   * use and the changes made at the instance by hand; it deploys the flows of its rollout target
   * and reports deploys made at the instance (drift). Default false.
   */
  fleet?: boolean
  /**
   * This instance's id in the fleet (1 to 128 letters, digits, `.`, `_` or `-`), and its name in
   * the trail. Default: one made on first start and kept in `<userDir>/.flowadmin-instance`. With
   * a credential of its own, the id it was enrolled as (this option is the id it asks for).
   */
  instanceId?: string
}

export interface AuditOptions {
  /**
   * This instance's name in flowadmin's trail, within its resource server. Default: in fleet mode
   * its fleet id (see `instanceId`), else the host name.
   */
  instance?: string
  /** Events not forwarded: names, `*` matching any run of characters. Default `["*.get", "comms.*"]`. */
  ignore?: string[]
  /** Most events waiting while flowadmin cannot be reached; past it the oldest are dropped, and counted. Default 10000. */
  bufferSize?: number
  /** Most events in one report, 1 to 500. Default 100. */
  batchSize?: number
  /** How long an event waits for others before a report is sent, in ms. Default 200. */
  delayMs?: number
  /** The longest wait between tries while flowadmin cannot be reached, in ms. Default 30000. */
  maxRetryMs?: number
}

/** One of Node-RED's log messages, as a custom logger's handler receives it. */
export interface NodeRedLogMessage {
  level: number
  event?: string
  timestamp?: number
  user?: { username?: string; [key: string]: unknown } | null
  ip?: string
  [key: string]: unknown
}

/** A Node-RED custom logger (`logging` in settings.js) that forwards audit events to flowadmin. */
export interface AuditLogger {
  level: 'off'
  audit: true
  handler(settings: unknown): (msg: NodeRedLogMessage) => void
  /** What waits to be sent (for tests); null before Node-RED asked for the handler. */
  readonly forwarder: { pending(): { events: number; dropped: number } } | null
}

export interface SsoOptions {
  /**
   * This instance's sign-in callback, `<its address><httpAdminRoot>/auth/strategy/callback`,
   * exactly as it is in the resource server's `redirectUris` at flowadmin.
   */
  redirectUri: string
  /** The button's text. Default "Sign in with single sign-on". */
  label?: string
  /** A Font Awesome class for the button, e.g. "fa-sign-in". */
  icon?: string
  /** flowadmin's address as people's browsers reach it. Default: `url`. */
  url?: string
}

/** A Passport strategy class as Node-RED instantiates it. */
export interface StrategyClass {
  new (
    options: object,
    verify: (...args: never[]) => unknown,
  ): { name: string; authenticate(req: unknown): void }
}

/** A user as Node-RED takes it: one permission as a string, several as an array. */
export interface NodeRedUser {
  username: string
  permissions: string | string[]
}

/** A complete Node-RED `adminAuth` setting. */
export interface AdminAuth {
  type: 'credentials'
  /** Always null: see the README. */
  users(username: string): Promise<NodeRedUser | null>
  /** The login form's check; `token` is flowadmin's, handed to the editor. */
  authenticate(username: string, password: string): Promise<(NodeRedUser & { token: string }) | null>
  /** Any bearer token, introspected at flowadmin. */
  tokens(token: string): Promise<NodeRedUser | null>
}

/** The `adminAuth` setting in SSO mode: Node-RED's "Sign in with …" button, through flowadmin. */
export interface StrategyAdminAuth {
  type: 'strategy'
  strategy: { name: 'flowadmin'; label: string; icon?: string; strategy: StrategyClass; options: object }
  /** Always null: see the README. */
  users(username: string): Promise<NodeRedUser | null>
  /** Any bearer token, introspected at flowadmin. */
  tokens(token: string): Promise<NodeRedUser | null>
}

export function adminAuth(options: FlowadminOptions & { sso: SsoOptions }): StrategyAdminAuth
export function adminAuth(options: FlowadminOptions): AdminAuth

/**
 * Node-RED's `logging: { flowadmin: auditLogger(options) }`: audit events go to flowadmin's trail.
 * The same options object as adminAuth; throws on bad options.
 */
export function auditLogger(options: FlowadminOptions): AuditLogger

export function httpAdminMiddleware(
  options: FlowadminOptions,
): (req: Request, res: Response, next: NextFunction) => void
