export {
  createHttpApp,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_UPLOAD_BYTES,
  type HttpAppOptions,
  normaliseBasePath,
  type ResponseSample,
} from './app.js'
export { basicCredentials } from './basic-credentials.js'
export { type CorsOptions, originProblem } from './cors.js'
export { REALM } from './errors.js'
export { FLEET_CHECK_MS, type FleetChanges } from './fleet-changes.js'
export type { FleetLeases } from './fleet-leases.js'
export type { FleetPulse } from './fleet-pulse.js'
export { instanceJson } from './fleet-schemas.js'
export { createFleetSignals, type FleetSignals } from './fleet-signals.js'
export type { OpenApiDocument } from './openapi.js'
export { type MetricsExposition, READINESS_TIMEOUT_MS, type Readiness } from './routes/health.js'
export { inventoryEntry } from './routes/tokens.js'
