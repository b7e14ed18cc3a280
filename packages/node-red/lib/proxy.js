'use strict'

const http = require('node:http')
const https = require('node:https')
const net = require('node:net')
const tls = require('node:tls')

// The forward proxy of the environment, as curl and npm read it: `https_proxy`/`HTTPS_PROXY` for
// https:// addresses, `http_proxy`/`HTTP_PROXY` for http:// ones (the lower-case name first), and
// `no_proxy`/`NO_PROXY` for the hosts reached directly. An https:// address goes through the proxy
// in a CONNECT tunnel (TLS end to end, the proxy sees the host name only); an http:// one is sent
// to the proxy in absolute form.

/** What `NO_PROXY` says, parsed once per value. */
let bypassCache = { value: null, entries: [] }

/** `NO_PROXY`'s entries: `*`, a host (and its subdomains), `.domain`, `*.domain`, each with an optional `:port`. */
function bypassEntries(value) {
  if (bypassCache.value === value) return bypassCache.entries
  const entries = []
  for (const raw of value.split(/[\s,]+/)) {
    const entry = raw.trim().toLowerCase()
    if (entry === '') continue
    if (entry === '*') {
      entries.push({ any: true })
      continue
    }
    const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry)
    if (match === null) continue
    const host = (match[1] ?? '')
      .replace(/^\[(.*)\]$/, '$1')
      .replace(/^\*\./, '.')
      .replace(/\.$/, '')
    entries.push({ host, port: match[2] === undefined ? null : Number(match[2]) })
  }
  bypassCache = { value, entries }
  return entries
}

/** Whether `NO_PROXY` names the host (and port) of `url`. */
function bypassed(url, value) {
  const host = url.hostname.toLowerCase().replace(/^\[(.*)\]$/, '$1')
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80))
  return bypassEntries(value).some((entry) => {
    if (entry.any) return true
    if (entry.port !== null && entry.port !== port) return false
    if (entry.host.startsWith('.')) return host.endsWith(entry.host) || host === entry.host.slice(1)
    return host === entry.host || host.endsWith(`.${entry.host}`)
  })
}

const variable = (name) => process.env[name.toLowerCase()] ?? process.env[name.toUpperCase()] ?? ''

/**
 * The proxy for `url` (a URL object) from the environment, read at each call: a URL, or null to go
 * directly. A proxy given without a scheme (`proxy.example:3128`) is http://.
 */
function proxyFor(url) {
  const value = variable(url.protocol === 'https:' ? 'https_proxy' : 'http_proxy').trim()
  if (value === '' || bypassed(url, variable('no_proxy'))) return null
  try {
    const proxy = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`)
    return proxy.protocol === 'http:' || proxy.protocol === 'https:' ? proxy : null
  } catch {
    return null
  }
}

/** `Proxy-Authorization` for a proxy URL with a user (and password), else none. */
function proxyHeaders(proxy) {
  if (proxy.username === '') return {}
  const pair = `${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`
  return { 'Proxy-Authorization': `Basic ${Buffer.from(pair).toString('base64')}` }
}

const proxyPort = (proxy) => Number(proxy.port || (proxy.protocol === 'https:' ? 443 : 80))
const proxyHost = (proxy) => proxy.hostname.replace(/^\[(.*)\]$/, '$1')

/**
 * An https agent whose connections are CONNECT tunnels through `proxy`, then TLS to the target as
 * a direct connection would be (the same certificate checks, the target's name for SNI).
 */
class TunnelAgent extends https.Agent {
  constructor(proxy, options) {
    super(options)
    this.proxy = proxy
  }

  createConnection(options, callback) {
    const target = `${options.host.includes(':') ? `[${options.host}]` : options.host}:${options.port}`
    const transport = this.proxy.protocol === 'https:' ? https : http
    const connect = transport.request({
      host: proxyHost(this.proxy),
      port: proxyPort(this.proxy),
      method: 'CONNECT',
      path: target,
      headers: { Host: target, ...proxyHeaders(this.proxy) },
      agent: false,
      servername: net.isIP(proxyHost(this.proxy)) === 0 ? proxyHost(this.proxy) : '',
    })
    let done = false
    const finish = (error, socket) => {
      if (done) return
      done = true
      callback(error, socket)
    }
    connect.once('connect', (response, socket, head) => {
      if (response.statusCode !== 200) {
        socket.destroy()
        const error = new Error(`the proxy answered HTTP ${response.statusCode} to CONNECT ${target}`)
        error.code = 'EPROXY'
        finish(error)
        return
      }
      if (head.length > 0) socket.unshift(head)
      const servername = options.servername || (net.isIP(options.host) === 0 ? options.host : undefined)
      finish(null, tls.connect({ ...options, socket, servername }))
    })
    connect.once('error', (error) => finish(error))
    // A proxy that never answers the CONNECT: the request waiting for it has its own deadline,
    // this only lets the attempt go.
    connect.setTimeout(CONNECT_TIMEOUT_MS, () =>
      connect.destroy(Object.assign(new Error('the proxy did not answer CONNECT'), { code: 'EPROXY' })),
    )
    connect.end()
  }
}

/** How long a proxy may take to answer a CONNECT. */
const CONNECT_TIMEOUT_MS = 60_000
const AGENT_OPTIONS = { keepAlive: true, maxSockets: 64, scheduling: 'lifo' }
/** The keep-alive agents of direct calls, and of each proxy (keyed by its URL). */
const direct = { 'http:': new http.Agent(AGENT_OPTIONS), 'https:': new https.Agent(AGENT_OPTIONS) }
const proxied = new Map()
/** Proxies remembered at most; the environment rarely changes, so this is a bound, not a cache size. */
const MAX_PROXIES = 8

/**
 * How to send a request to `url` (a URL object): the transport, the agent, and the host, port,
 * path and headers to give it. Direct, or through the environment's proxy.
 */
function routeOf(url) {
  const proxy = proxyFor(url)
  const secure = url.protocol === 'https:'
  const path = `${url.pathname}${url.search}`
  if (proxy === null) {
    return {
      transport: secure ? https : http,
      agent: direct[url.protocol],
      host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: Number(url.port || (secure ? 443 : 80)),
      path,
      headers: {},
      proxy: null,
    }
  }
  const key = `${url.protocol}${proxy.href}`
  let agent = proxied.get(key)
  if (agent === undefined) {
    if (proxied.size >= MAX_PROXIES) {
      const [oldest, old] = proxied.entries().next().value
      proxied.delete(oldest)
      old.destroy()
    }
    agent = secure
      ? new TunnelAgent(proxy, AGENT_OPTIONS)
      : new (proxy.protocol === 'https:' ? https : http).Agent(AGENT_OPTIONS)
    proxied.set(key, agent)
  }
  if (secure) {
    return {
      transport: https,
      agent,
      host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: Number(url.port || 443),
      path,
      headers: {},
      proxy,
    }
  }
  // Plain http through the proxy: the whole URL as the request target (RFC 9112 §3.2.2).
  return {
    transport: proxy.protocol === 'https:' ? https : http,
    agent,
    host: proxyHost(proxy),
    port: proxyPort(proxy),
    path: `${url.origin}${path}`,
    headers: { Host: url.host, ...proxyHeaders(proxy) },
    proxy,
    // TLS to an https:// proxy names the proxy, not the Host header's target.
    servername: net.isIP(proxyHost(proxy)) === 0 ? proxyHost(proxy) : '',
  }
}

module.exports = { proxyFor, routeOf }
