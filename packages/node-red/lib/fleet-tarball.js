'use strict'

const { createHash, timingSafeEqual } = require('node:crypto')
const { request } = require('./http')

// The tarball flowadmin vetted, fetched by the agent itself: downloaded from the URL flowadmin
// installed it from (through the helper's own transport, so HTTPS_PROXY and NO_PROXY apply),
// bounded in size and time, and kept only when its SHA-512 is the integrity flowadmin recorded.
// No credentials are sent, so a registry's redirect (to its storage) is followed, a few times.

/** The largest tarball fetched; a node module's is far smaller. */
const MAX_TARBALL_BYTES = 64 * 1024 * 1024
/** How long a download may take, redirects included. */
const TARBALL_TIMEOUT_MS = 5 * 60_000
const MAX_REDIRECTS = 5
/** An integrity in SRI form whose hash is SHA-512: 64 bytes in base64. */
const SHA512 = /^sha512-([A-Za-z0-9+/]{86}==)$/

/** The SHA-512 an integrity names (an SRI string may list several hashes), as bytes; null without one. */
function sha512Of(integrity) {
  if (typeof integrity !== 'string') return null
  for (const hash of integrity.trim().split(/\s+/)) {
    const match = SHA512.exec(hash.replace(/\?.*$/, ''))
    if (match !== null) return Buffer.from(match[1], 'base64')
  }
  return null
}

/** `location` resolved against `base`, or as it is when it is no URL (refused then). */
function resolveOr(location, base) {
  try {
    return new URL(location, base).href
  } catch {
    return location
  }
}

const short = (text) => String(text).split('\n')[0].slice(0, 300)

/**
 * Downloads the tarball of `entry` ({module, version, integrity, tarball}) and checks it:
 * `{bytes}` when its SHA-512 is the integrity, else `{refused: why}` (one line). Never rejects.
 *
 * @param {{module: string, version: string | null, integrity: string, tarball: string}} entry
 * @param {{signal?: AbortSignal, maxBytes?: number, timeoutMs?: number}} [options]
 */
async function fetchVetted(entry, options = {}) {
  try {
    return await download(entry, options)
  } catch (error) {
    return { refused: `the tarball could not be downloaded (${short(error?.message ?? error)})` }
  }
}

async function download(entry, options) {
  const expected = sha512Of(entry.integrity)
  if (expected === null) return { refused: 'the integrity flowadmin sent is not a SHA-512: not installed' }
  if (typeof entry.tarball !== 'string') return { refused: 'flowadmin sent no tarball URL: not installed' }
  const maxBytes = options.maxBytes ?? MAX_TARBALL_BYTES
  const deadline = Date.now() + (options.timeoutMs ?? TARBALL_TIMEOUT_MS)
  let address = entry.tarball
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    let url
    try {
      url = new URL(address)
    } catch {
      return {
        refused:
          hop === 0
            ? 'the tarball URL flowadmin sent is not a URL'
            : 'the tarball was redirected to no URL: not installed',
      }
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      return { refused: `the tarball URL is not http(s): ${short(url.protocol)}` }
    }
    const answer = await request(url.href, {
      headers: { Accept: 'application/octet-stream' },
      timeoutMs: Math.max(0, deadline - Date.now()),
      signal: options.signal,
      maxBytes,
      binary: true,
    })
    const where = `${url.origin}${url.pathname}`
    if (answer.status === 0) {
      if (answer.failure === 'too-large') {
        return { refused: `the tarball at ${where} is larger than ${maxBytes} bytes: not installed` }
      }
      return { refused: `the tarball at ${where} could not be downloaded (${short(answer.reason)})` }
    }
    const location = answer.headers.location
    if ([301, 302, 303, 307, 308].includes(answer.status) && typeof location === 'string') {
      // Resolved against this URL; one that is none is refused at the next turn.
      address = resolveOr(location, url)
      continue
    }
    if (answer.status !== 200) {
      return { refused: `the tarball at ${where} could not be downloaded (HTTP ${answer.status})` }
    }
    const actual = createHash('sha512').update(answer.bytes).digest()
    if (!timingSafeEqual(actual, expected)) {
      return {
        refused: `integrity mismatch: the registry served another tarball than flowadmin vetted (${entry.module}${entry.version ? `@${entry.version}` : ''} at ${where}): not installed`,
      }
    }
    return { bytes: answer.bytes }
  }
  return {
    refused: `the tarball at ${short(entry.tarball.split('?')[0])} redirects more than ${MAX_REDIRECTS} times`,
  }
}

module.exports = { fetchVetted, sha512Of, MAX_TARBALL_BYTES }
