// The settings file as a whole: its sections in the order messages name them, and the settings
// the server runs with, every default applied.
import * as path from 'node:path'
import { DEFAULT_MAX_BODY_BYTES, normaliseBasePath } from '@flowadmin/adapter-http'
import * as v from 'valibot'
import { SettingsError } from '../../errors.js'
import { DEFAULT_HTTP_LIMITS, type HttpLimits } from '../../http/listen.js'
import { type AccessSettings, accessOf } from './access.js'
import { type AdminAuthSettings, adminAuth, adminAuthOf } from './admin-auth.js'
import { type AuditTrailSettings, auditLog, auditLogOf, auditTrail, auditTrailOf } from './audit.js'
import { onOff, strictObject, text } from './fields.js'
import { type FleetSettings, fleet, fleetOf } from './fleet.js'
import {
  apiMaxLength,
  DEFAULT_HOST,
  DEFAULT_PORT,
  DEFAULT_SHUTDOWN_TIMEOUT,
  httpAdminCors,
  httpAdminRoot,
  httpServer,
  shutdownTimeout,
  trustProxy,
  uiHost,
  uiPort,
} from './http.js'
import { metrics, metricsOf } from './metrics.js'
import { DEFAULT_PALETTE, externalModules, type PaletteSettings } from './palette.js'
import { type PostgresSettings, postgres, postgresOf, storage } from './storage.js'

/** Settings after validation, with every default applied and every path absolute. */
export interface Settings {
  uiHost: string
  uiPort: number
  /** Absolute. */
  userDir: string
  /** '' or a prefix such as '/admin' (no trailing slash). */
  httpAdminRoot: string
  storage: 'sqlite' | 'memory' | 'postgres'
  /** The PostgreSQL store's connection, used when `storage` is 'postgres'. */
  postgres: PostgresSettings
  adminAuth: AdminAuthSettings | null
  /** 'stdout', 'off', or an absolute file path the events are appended to. */
  auditLog: 'stdout' | 'off' | { file: string }
  /** What the trail keeps of flowadmin's own events and of each reporter's, and each reporter's pace. */
  auditTrail: AuditTrailSettings
  /** Addresses and CIDR ranges of the reverse proxies whose X-Forwarded-For counts; [] for none. */
  trustProxy: string[]
  /** Browser origins that may call the API (CORS); null: no CORS headers at all. */
  httpAdminCors: { origins: string[] } | null
  /** Largest request body, in bytes. */
  apiMaxLength: number
  /** Timeouts and header size of the HTTP server. */
  httpServer: HttpLimits
  /**
   * Where `GET /metrics` is served: 'api' beside the API (needs `metrics.read`), 'off', or on a
   * listener of its own (open to whoever reaches it, so loopback only).
   */
  metrics: 'api' | 'off' | { host: string; port: number }
  /** Milliseconds requests in flight may take to finish once a stop is asked for. */
  shutdownTimeout: number
  /** Serve the console, the page for people, at `<httpAdminRoot>/`. */
  console: boolean
  /** Installing and removing node modules (`externalModules.palette`). */
  palette: PaletteSettings
  /**
   * Fleet mode: the module routes state the desired modules of the Node-RED instances whose
   * helper reports here; null: off, the module routes manage `userDir`.
   */
  fleet: FleetSettings | null
  /**
   * Who may do what where: `adminAuth.roles` and `fleet.groups` (see access.ts); every grant of
   * the settings names a role and a group of these.
   */
  access: AccessSettings
}

export const schema = strictObject({
  uiHost: v.optional(uiHost),
  uiPort: v.optional(uiPort),
  userDir: v.optional(text('a folder')),
  httpAdminRoot: v.optional(httpAdminRoot),
  storage: v.optional(storage),
  postgres: v.optional(postgres),
  adminAuth: v.optional(adminAuth),
  auditLog: v.optional(auditLog),
  auditTrail: v.optional(auditTrail),
  trustProxy: v.optional(trustProxy),
  httpAdminCors: v.optional(httpAdminCors),
  apiMaxLength: v.optional(apiMaxLength),
  httpServer: v.optional(httpServer),
  metrics: v.optional(metrics),
  shutdownTimeout: v.optional(shutdownTimeout),
  console: v.optional(onOff),
  externalModules: v.optional(externalModules),
  fleet: v.optional(fleet),
})

export type SettingsInput = v.InferInput<typeof schema>

/**
 * The settings of a valid settings object, every default applied; relative paths resolve against
 * `baseDir`. Refuses what no single field's schema can (a section set for a store not used, a
 * scheme with no way to sign in), naming `source`.
 */
export function settingsOf(parsed: v.InferOutput<typeof schema>, source: string, baseDir: string): Settings {
  return {
    uiHost: parsed.uiHost ?? DEFAULT_HOST,
    uiPort: parsed.uiPort ?? DEFAULT_PORT,
    userDir: path.resolve(baseDir, parsed.userDir ?? '.'),
    httpAdminRoot: normaliseBasePath(parsed.httpAdminRoot ?? ''),
    storage: parsed.storage ?? 'sqlite',
    postgres: postgresOf(parsed, source),
    adminAuth: parsed.adminAuth === undefined ? null : adminAuthOf(parsed.adminAuth, source, baseDir),
    auditLog: auditLogOf(parsed.auditLog, baseDir),
    auditTrail: auditTrailOf(parsed.auditTrail),
    trustProxy: parsed.trustProxy ?? [],
    httpAdminCors:
      parsed.httpAdminCors === undefined ? null : { origins: [parsed.httpAdminCors.origin].flat() },
    apiMaxLength: parsed.apiMaxLength ?? DEFAULT_MAX_BODY_BYTES,
    httpServer: parsed.httpServer ?? { ...DEFAULT_HTTP_LIMITS },
    metrics: metricsOf(parsed.metrics),
    shutdownTimeout: parsed.shutdownTimeout ?? DEFAULT_SHUTDOWN_TIMEOUT,
    console: parsed.console ?? true,
    palette: { ...DEFAULT_PALETTE, ...parsed.externalModules?.palette },
    fleet: fleetOf(
      parsed.fleet,
      (field, message) => new SettingsError(`${source}: fleet${field}: ${message}`),
    ),
    access: accessOf(
      { roles: parsed.adminAuth?.roles, groups: parsed.fleet?.groups },
      {
        users: parsed.adminAuth?.users ?? [],
        oidc: parsed.adminAuth?.oidc?.permissions.map,
        ldap: parsed.adminAuth?.ldap?.permissions.map,
      },
      (field, message) => new SettingsError(`${source}: ${field}: ${message}`),
    ),
  }
}
