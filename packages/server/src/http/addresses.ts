// The addresses the server meets: the TCP peer of a request, and whether an address is this
// machine's own (where an open admin API or the metrics listener may listen).
import { isIP } from 'node:net'
import { getConnInfo } from '@hono/node-server/conninfo'
import type { Context } from 'hono'
import { canonicalAddress } from './proxy.js'

/** True for addresses only this machine can reach: 127.0.0.0/8, ::1 and localhost. */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase()
  if (bare === 'localhost' || bare === '::1') return true
  const v4 = bare.startsWith('::ffff:') ? bare.slice(7) : bare
  return isIP(v4) === 4 && v4.startsWith('127.')
}

/** The TCP peer's address of a request, canonical (IPv4-mapped IPv6 shown as plain IPv4). */
export function socketAddress(c: Context): string {
  try {
    const address = getConnInfo(c).remote.address
    if (address === undefined) return 'unknown'
    return canonicalAddress(address) ?? address
  } catch {
    return 'unknown'
  }
}
