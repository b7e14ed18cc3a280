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
export { createFleetChanges, FLEET_CHECK_MS, type FleetChanges } from './fleet-changes.js'
export type { OpenApiDocument } from './openapi.js'
export { type MetricsExposition, READINESS_TIMEOUT_MS, type Readiness } from './routes/health.js'
export { inventoryEntry } from './routes/tokens.js'
