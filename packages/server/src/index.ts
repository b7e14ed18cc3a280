export {
  ARGON2_OPTIONS,
  createArgon2Verifier,
  DEFAULT_VERIFY_CONCURRENCY,
  hashPassword,
} from './adapters/argon2.js'
export {
  type AuditFileReport,
  type AuditLog,
  type AuditTarget,
  createAuditLog,
  formatAuditLine,
} from './adapters/audit.js'
export { fanOut } from './adapters/fan-out.js'
export { createFlowsTypeUsage } from './adapters/flows.js'
export { createMetrics, LOGIN_OUTCOMES, type Metrics, type MetricsSources } from './adapters/metrics.js'
export {
  createDiskLoader,
  type DiscoveredModule,
  type DiscoveredSet,
  discoverModules,
  MANIFEST_KEYS,
  toDescriptors,
  typesOf,
  type Warn,
} from './adapters/modules-on-disk.js'
export type { ReloadOutcome, RunningServer, ServerOptions } from './compose/options.js'
export { RELOADED_SETTINGS } from './compose/reload.js'
export { startServer } from './compose/start.js'
export type { AdminAuthSettings } from './config/settings/admin-auth.js'
export { hashWarnings } from './config/settings/hash-warnings.js'
export { DEFAULT_HOST, DEFAULT_PORT } from './config/settings/http.js'
export { loadSettings, parseSettings } from './config/settings/load.js'
export type { Settings, SettingsInput } from './config/settings/schema.js'
export { EXIT_RUNTIME, EXIT_USAGE, SettingsError, StartupError } from './errors.js'
export { isLoopback, socketAddress } from './http/addresses.js'
export { type Listener, listen } from './http/listen.js'
export { metricsFetch } from './http/metrics-listener.js'
export { createReadiness, type ServiceState } from './http/readiness.js'
export { createLogger, type Log, type Logger, type LoggerSetup, logTo } from './log.js'
export { VERSION } from './package-files.js'
