// Where and how the API listens: address and port, its root path, the proxies trusted, CORS, the
// largest body, the HTTP server's timeouts and the grace of a stop.
import { originProblem } from '@flowadmin/adapter-http'
import bytes from 'bytes'
import * as v from 'valibot'
import { DEFAULT_HTTP_LIMITS, type HttpLimits } from '../../http/listen.js'
import { trustProxyProblem } from '../../http/proxy.js'
import { issueOf, strictObject, text, whole } from './fields.js'

export const DEFAULT_HOST = '127.0.0.1'
export const DEFAULT_PORT = 1880
export const DEFAULT_SHUTDOWN_TIMEOUT = 10_000

const MAX_API_MAX_LENGTH = 100 * 1024 * 1024
/**
 * A size as Node-RED takes it (it hands these strings to the `bytes` package): whole bytes with an
 * optional `b`, or a number, possibly with decimals, and kb, mb, gb, tb or pb (powers of 1024, any
 * case). Only the shape is checked here; `bytes` does the arithmetic. Anything `bytes` would read
 * loosely ("1.5", "10 apples") is refused instead.
 */
const SIZE = /^(\d+ *b?|\d+(\.\d+)? *(kb|mb|gb|tb|pb))$/i
const SIZE_MESSAGE = 'must be a number of bytes or a size such as "64kb" or "1mb"'
const ADMIN_ROOT = /^(\/[A-Za-z0-9._~!$&'()*+,;=:@-]+)*\/?$/

export const uiHost = text('a host name or address')
export const uiPort = whole(0, 65_535)

export const httpAdminRoot = v.pipe(
  v.string('must be a string'),
  v.regex(ADMIN_ROOT, 'must be "" or a path such as "/admin"'),
)

export const trustProxy = v.array(
  v.pipe(v.string('must be a string'), issueOf(trustProxyProblem)),
  'must be a list of addresses',
)

const origins = v.union(
  [
    v.pipe(v.string(), issueOf(originProblem)),
    v.pipe(v.array(v.pipe(v.string(), issueOf(originProblem))), v.nonEmpty('must list at least one origin')),
  ],
  'must be an origin such as "https://editor.example" or a non-empty list of them',
)

export const httpAdminCors = strictObject({ origin: origins })

const sizeText = v.pipe(
  v.string(),
  v.regex(SIZE, SIZE_MESSAGE),
  v.transform((text) => bytes.parse(text) as number),
)

export const apiMaxLength = v.pipe(
  v.union([v.number(), sizeText], SIZE_MESSAGE),
  whole(1, MAX_API_MAX_LENGTH),
)

const milliseconds = whole(1, 3_600_000)

export const httpServer = v.pipe(
  strictObject({
    headersTimeout: v.optional(milliseconds, DEFAULT_HTTP_LIMITS.headersTimeout),
    requestTimeout: v.optional(milliseconds, DEFAULT_HTTP_LIMITS.requestTimeout),
    keepAliveTimeout: v.optional(milliseconds, DEFAULT_HTTP_LIMITS.keepAliveTimeout),
    maxHeaderSize: v.optional(whole(1024, 1_048_576), DEFAULT_HTTP_LIMITS.maxHeaderSize),
  }),
  v.check(
    (limits) => limits.headersTimeout <= limits.requestTimeout,
    (issue) =>
      `headersTimeout (${(issue.input as HttpLimits).headersTimeout}) must not be longer than requestTimeout (${(issue.input as HttpLimits).requestTimeout})`,
  ),
)

export const shutdownTimeout = whole(0, 3_600_000)
