export {
  createHttpApp,
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_MAX_UPLOAD_BYTES,
  type HttpAppOptions,
  type ResponseSample,
} from './app.js'
export { readNodeBody } from './body.js'
export { type CorsOptions, originProblem } from './cors.js'
export { REALM } from './errors.js'
export { createFleetChanges, FLEET_CHECK_MS, type FleetChanges } from './fleet-changes.js'
export type { OpenApiDocument } from './openapi.js'
export { type MetricsExposition, READINESS_TIMEOUT_MS, type Readiness } from './routes/health.js'
export {
  answerIntrospection,
  basicCredentials,
  type IntrospectionReply,
  introspectionFailure,
} from './routes/introspect.js'
export { tokenJson } from './routes/tokens.js'
