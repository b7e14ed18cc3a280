export { ARGON2_OPTIONS, createArgon2Verifier, DEFAULT_VERIFY_CONCURRENCY, hashPassword } from './argon2.js'
export {
  type AuditFileReport,
  type AuditLog,
  type AuditTarget,
  createAuditLog,
  formatAuditLine,
} from './audit.js'
export {
  isLoopback,
  RELOADED_SETTINGS,
  type ReloadOutcome,
  type RunningServer,
  type ServerOptions,
  socketAddress,
  startServer,
  VERSION,
} from './compose.js'
export { EXIT_RUNTIME, EXIT_USAGE, SettingsError, StartupError } from './errors.js'
export { createFlowsTypeUsage } from './flows.js'
export { type Listener, listen } from './listen.js'
export { createLogger, type Log, type Logger, type LoggerSetup, logTo } from './log.js'
export {
  createMetrics,
  fanOut,
  LOGIN_OUTCOMES,
  type Metrics,
  type MetricsSources,
  metricsFetch,
} from './metrics.js'
export {
  createDiskLoader,
  type DiscoveredModule,
  type DiscoveredSet,
  discoverModules,
  MANIFEST_KEYS,
  toDescriptors,
  typesOf,
  type Warn,
} from './modules-on-disk.js'
export { createReadiness, type ServiceState } from './readiness.js'
export {
  type AdminAuthSettings,
  DEFAULT_HOST,
  DEFAULT_PORT,
  loadSettings,
  parseSettings,
  type Settings,
  type SettingsInput,
} from './settings.js'
