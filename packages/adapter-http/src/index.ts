export { createHttpApp, DEFAULT_MAX_BODY_BYTES, type HttpAppOptions } from './app.js'
export { REALM } from './errors.js'
