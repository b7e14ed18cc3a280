'use strict'

// The options both exports take, checked once when Node-RED loads its settings file: a mistake
// stops Node-RED at start with a message naming the option, never at the first login.

/** The longest a token's introspection may be reused: a revoked token stays usable that long. */
const MAX_CACHE_MS = 5000
const DEFAULT_TIMEOUT_MS = 3000
/** A hook waits this long at most; Node-RED holds the editor's request meanwhile. */
const MAX_TIMEOUT_MS = 60000

const KNOWN = [
  'url',
  'clientId',
  'clientSecret',
  'cacheMs',
  'timeoutMs',
  'middleware',
  'log',
  'now',
  'sso',
  'allowInsecureHttp',
  'audit',
  'fleet',
  'instanceId',
  'enrolmentToken',
]
const SSO_KNOWN = ['redirectUri', 'label', 'icon', 'url']
const DEFAULT_SSO_LABEL = 'Sign in with single sign-on'

/**
 * @typedef {object} Settings
 * @property {string} url flowadmin's base address, without a trailing slash
 * @property {string | null} clientId the resource server's, shared by its instances; null: none
 *   given, this instance uses a credential of its own (credentials.js)
 * @property {string | null} clientSecret
 * @property {string | null} enrolmentToken the one-time token this instance enrols with, or null
 * @property {number} cacheMs
 * @property {number} timeoutMs
 * @property {Function[]} middleware the instance's own httpAdminMiddleware, flattened
 * @property {(line: string) => void} log
 * @property {() => number} now
 * @property {SsoSettings | null} sso the editor signs in through flowadmin, or null: the login form
 * @property {boolean} fleet this instance applies flowadmin's desired node modules and reports its own
 * @property {string | null} instanceId this instance's id in the fleet; null: kept in the userDir
 */

/**
 * @typedef {object} SsoSettings
 * @property {string} redirectUri this instance's `<httpAdminRoot>/auth/strategy/callback`, as
 *   registered at flowadmin
 * @property {string} label the sign-in button's text
 * @property {string | null} icon a Font Awesome class for the button, e.g. "fa-sign-in"
 * @property {string} url flowadmin's address as people's browsers reach it
 */

/** A settings error: Node-RED prints the message and does not start. */
function invalid(message) {
  return new Error(`@flowadmin/node-red: ${message}`)
}

/** A value as a message may show it: short, one line. Never used for the client secret. */
function shown(value) {
  if (typeof value === 'string') return JSON.stringify(value.length > 80 ? `${value.slice(0, 80)}…` : value)
  if (typeof value === 'function') return 'a function'
  if (Array.isArray(value)) return 'an array'
  if (value === null) return 'null'
  return typeof value === 'object' ? 'an object' : String(value)
}

/** One line on stderr, as Node-RED's own warnings go to the console. */
function defaultLog(line) {
  console.warn(`[flowadmin] ${line}`)
}

/**
 * Whether `hostname` (as URL parses it: IPv4 normalised, IPv6 in brackets) names this host only:
 * 127.0.0.0/8, [::1] or localhost. Plain http stays on the machine there.
 */
function isLoopback(hostname) {
  const host = hostname.toLowerCase().replace(/\.$/, '')
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host)
}

/**
 * Plain http to another host carries the client secret, every password of the login form and every
 * token in clear: refused unless allowInsecureHttp says so.
 */
function requireTransport(url, name, allowInsecureHttp) {
  if (url.protocol === 'https:' || allowInsecureHttp || isLoopback(url.hostname)) return
  throw invalid(
    `${name} is plain http to ${url.hostname}, so the client secret, passwords and tokens would cross the network in clear: ` +
      `use https://, or set allowInsecureHttp: true if that network is trusted (see the README)`,
  )
}

/** flowadmin's base address: http(s), no credentials, query or fragment; no trailing slash. */
function parseUrl(value, name = 'url', allowInsecureHttp = false) {
  if (typeof value !== 'string' || value.trim() === '') {
    throw invalid(`url is missing: give flowadmin's address, e.g. "https://flowadmin.example:1880"`)
  }
  let url
  try {
    url = new URL(value)
  } catch {
    throw invalid(`url is not a valid URL: ${shown(value)}`)
  }
  if (url.username !== '' || url.password !== '') {
    throw invalid('url must not contain a user or password: give them as clientId and clientSecret')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid(`url must start with https:// or http://, got ${shown(value)}`)
  }
  if (url.search !== '' || url.hash !== '') {
    throw invalid(`url must not have a query or fragment, got ${shown(value)}`)
  }
  requireTransport(url, name, allowInsecureHttp)
  return `${url.origin}${url.pathname.replace(/\/+$/, '')}`
}

function parseString(options, name, hint) {
  const value = options[name]
  if (typeof value !== 'string' || value === '') {
    throw invalid(`${name} is missing${value === undefined ? '' : ` or empty`}${hint}`)
  }
  return value
}

function parseMs(options, name, fallback, min, max, why) {
  const value = options[name]
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw invalid(
      `${name} must be a whole number of milliseconds from ${min} to ${max}${why}, got ${shown(value)}`,
    )
  }
  return value
}

/**
 * The log option, made harmless: a log that throws would otherwise turn a refused token into a
 * rejected hook, which stops Node-RED.
 */
function safeLog(log) {
  return (line) => {
    try {
      log(line)
    } catch {
      // Nothing else to tell it to.
    }
  }
}

function parseBoolean(options, name) {
  const value = options[name]
  if (value === undefined) return false
  if (typeof value !== 'boolean') throw invalid(`${name} must be true or false, got ${shown(value)}`)
  return value
}

function parseFunction(options, name, fallback) {
  const value = options[name]
  if (value === undefined) return fallback
  if (typeof value !== 'function') throw invalid(`${name} must be a function, got ${shown(value)}`)
  return value
}

/** A function or an array of them, nested as Express allows, flattened. */
function parseMiddleware(value) {
  if (value === undefined) return []
  const list = Array.isArray(value) ? value.flat(Number.POSITIVE_INFINITY) : [value]
  if (!list.every((item) => typeof item === 'function')) {
    throw invalid(
      `middleware must be a function or an array of functions (the instance's own httpAdminMiddleware), got ${shown(value)}`,
    )
  }
  return list
}

/** An absolute http(s) URL without credentials or fragment, as given (it is compared exactly). */
function parseRedirectUri(value) {
  if (typeof value !== 'string' || value === '') {
    throw invalid(
      'sso.redirectUri is missing: give this instance\'s sign-in callback as flowadmin has it registered, e.g. "https://nodered.example/auth/strategy/callback"',
    )
  }
  let url
  try {
    url = new URL(value)
  } catch {
    throw invalid(`sso.redirectUri is not a valid URL: ${shown(value)}`)
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.username !== '' || value.includes('#')) {
    throw invalid(
      `sso.redirectUri must be an http(s) URL without credentials or #fragment, got ${shown(value)}`,
    )
  }
  return value
}

/** The SSO mode's options, or null without them. */
function parseSso(value, url, allowInsecureHttp) {
  if (value === undefined) return null
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw invalid('sso must be an object: { redirectUri, label }')
  }
  const unknown = Object.keys(value).filter((key) => !SSO_KNOWN.includes(key))
  if (unknown.length > 0) {
    throw invalid(`unknown option sso.${String(unknown[0])}; the options of sso are ${SSO_KNOWN.join(', ')}`)
  }
  const optional = (name) => {
    if (value[name] === undefined) return null
    if (typeof value[name] !== 'string' || value[name] === '')
      throw invalid(`sso.${name} must be a non-empty string`)
    return value[name]
  }
  return {
    redirectUri: parseRedirectUri(value.redirectUri),
    label: optional('label') ?? DEFAULT_SSO_LABEL,
    icon: optional('icon'),
    url: value.url === undefined ? url : parseUrl(value.url, 'sso.url', allowInsecureHttp),
  }
}

/**
 * Checks and completes the options.
 * @returns {Settings}
 */
function parseOptions(options) {
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw invalid('options must be an object: { url, clientId, clientSecret }')
  }
  const unknown = Object.keys(options).filter((key) => !KNOWN.includes(key))
  if (unknown.length > 0) {
    throw invalid(`unknown option ${shown(unknown[0])}; the options are ${KNOWN.join(', ')}`)
  }
  const allowInsecureHttp = parseBoolean(options, 'allowInsecureHttp')
  const url = parseUrl(options.url, 'url', allowInsecureHttp)
  // The shared clientId and clientSecret go together; without both, the instance's own credential.
  const shared = options.clientId !== undefined || options.clientSecret !== undefined
  return {
    url,
    clientId: shared
      ? parseString(options, 'clientId', ': the id of the flowadmin client this instance uses')
      : null,
    clientSecret: shared
      ? parseString(options, 'clientSecret', ' (is the environment variable that holds it set?)')
      : null,
    enrolmentToken: parseEnrolmentToken(options.enrolmentToken),
    cacheMs: parseMs(
      options,
      'cacheMs',
      0,
      0,
      MAX_CACHE_MS,
      ' (a revoked token stays usable on this instance for up to cacheMs)',
    ),
    timeoutMs: parseMs(options, 'timeoutMs', DEFAULT_TIMEOUT_MS, 1, MAX_TIMEOUT_MS, ''),
    middleware: parseMiddleware(options.middleware),
    log: safeLog(parseFunction(options, 'log', defaultLog)),
    now: parseFunction(options, 'now', Date.now),
    sso: parseSso(options.sso, url, allowInsecureHttp),
    fleet: parseBoolean(options, 'fleet'),
    instanceId: parseInstanceId(options.instanceId),
  }
}

/** 1 to 128 letters, digits, `.`, `_` or `-`, starting with a letter or digit; absent: null. */
function parseInstanceId(value) {
  if (value === undefined) return null
  if (typeof value !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(value)) {
    throw invalid(
      `instanceId must be 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit, got ${shown(value)}`,
    )
  }
  return value
}

/** The environment variable read when the enrolmentToken option is absent. */
const ENROLMENT_TOKEN_ENV = 'FLOWADMIN_ENROLMENT_TOKEN'

/**
 * The enrolment token: the option, else the environment variable (empty counts as absent); null
 * without one. Printable, without spaces; never shown in a message.
 */
function parseEnrolmentToken(value) {
  const from = value === undefined ? ENROLMENT_TOKEN_ENV : 'enrolmentToken'
  const token = value === undefined ? process.env[ENROLMENT_TOKEN_ENV] || undefined : value
  if (token === undefined) return null
  if (typeof token !== 'string' || !/^[\x21-\x7e]{1,1024}$/.test(token)) {
    throw invalid(
      `${from} must be the enrolment token flowadmin gave (printable, without spaces, at most 1024 characters)`,
    )
  }
  return token
}

module.exports = { parseOptions, MAX_CACHE_MS, ENROLMENT_TOKEN_ENV }
