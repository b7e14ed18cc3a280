import type { ClientCredentials } from '@flowadmin/core'
import { UTF8 } from './body.js'

/**
 * The credentials of an HTTP Basic `Authorization` header (RFC 6749 §2.3.1: id and secret each
 * form-urlencoded, then joined by `:` and base64-encoded), or null when there are none or they
 * are malformed.
 */
export function basicCredentials(header: string | undefined): ClientCredentials | null {
  const match = BASIC.exec(header ?? '')
  if (match === null) return null
  let decoded: string
  try {
    // atob gives one character per byte: as it is when every byte is ASCII, else decoded as UTF-8.
    const bytes = atob(match[1] as string)
    decoded = NON_ASCII.test(bytes)
      ? UTF8.decode(Uint8Array.from(bytes, (char) => char.charCodeAt(0)))
      : bytes
  } catch {
    return null
  }
  const colon = decoded.indexOf(':')
  if (colon < 1) return null
  try {
    return { id: formDecode(decoded.slice(0, colon)), secret: formDecode(decoded.slice(colon + 1)) }
  } catch {
    return null
  }
}

const BASIC = /^Basic +([A-Za-z0-9+/]+={0,2}) *$/i
/** A byte past ASCII, in atob's one-character-per-byte string. */
const NON_ASCII = /[\u0080-\u00ff]/
/** application/x-www-form-urlencoded decoding of one part; throws on a malformed escape. */
const formDecode = (text: string) =>
  text.includes('%') || text.includes('+') ? decodeURIComponent(text.replace(/\+/g, ' ')) : text
