// `metrics`: where `GET /metrics` is served, beside the API, nowhere, or on a listener of its own.
import * as v from 'valibot'
import { strictObject, text, whole } from './fields.js'

export const DEFAULT_METRICS_HOST = '127.0.0.1'

// An object is checked field by field, so its messages name the field; anything else is one message.
const metricsListener = strictObject({ host: v.optional(text('a loopback address')), port: whole(0, 65_535) })

export const metrics = v.lazy((input) =>
  typeof input === 'object' && input !== null && !Array.isArray(input)
    ? metricsListener
    : v.boolean('must be true, false or {"host": "127.0.0.1", "port": <port>}'),
)

/** `metrics` as the server uses it: 'api' (the default), 'off', or a listener's host and port. */
export const metricsOf = (
  parsed: v.InferOutput<typeof metrics> | undefined,
): 'api' | 'off' | { host: string; port: number } =>
  typeof parsed === 'object'
    ? { host: parsed.host ?? DEFAULT_METRICS_HOST, port: parsed.port }
    : parsed === false
      ? 'off'
      : 'api'
