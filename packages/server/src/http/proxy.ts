import { BlockList, isIP } from 'node:net'

/** The reverse proxies whose `X-Forwarded-For` counts. */
export interface TrustedProxies {
  /** True when `address` (any form `canonicalAddress` accepts) is one of the trusted proxies. */
  has(address: string): boolean
  /** How many entries were given; 0 means X-Forwarded-For is never read. */
  readonly size: number
}

const CIDR = /^([^/]+)\/(\d{1,3})$/

/**
 * The canonical text of an IP address, so that one client has one throttle key however its
 * address is written: IPv4-mapped IPv6 (`::ffff:10.0.0.1`) becomes IPv4, IPv6 is lower-case and
 * compressed (`0:0::1` -> `::1`), a zone (`%eth0`) is kept. Null when it is not an IP address.
 */
export function canonicalAddress(address: string): string | null {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address
  const family = isIP(bare)
  if (family === 4) return bare
  if (family !== 6) return null
  const zoneAt = bare.indexOf('%')
  const zone = zoneAt === -1 ? '' : bare.slice(zoneAt)
  // The WHATWG URL parser compresses IPv6 as RFC 5952 says (and rejects zones, kept aside).
  const compressed = new URL(`http://[${zoneAt === -1 ? bare : bare.slice(0, zoneAt)}]/`).hostname.slice(
    1,
    -1,
  )
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(compressed)
  if (mapped !== null && zone === '') {
    const high = Number.parseInt(mapped[1] as string, 16)
    const low = Number.parseInt(mapped[2] as string, 16)
    return `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`
  }
  return compressed + zone
}

/** Why a `trustProxy` entry is not usable, or null when it is an address or a CIDR range. */
export function trustProxyProblem(entry: string): string | null {
  const range = CIDR.exec(entry)
  const address = range ? (range[1] as string) : entry
  const family = isIP(address)
  if (family === 0 || address.includes('%')) {
    return `"${entry}" is not an IP address or a CIDR range (e.g. "10.0.0.0/8", "fd00::/8", "127.0.0.1")`
  }
  if (range !== null) {
    const bits = Number(range[2])
    const max = family === 4 ? 32 : 128
    if (bits > max) return `"${entry}": an IPv${family} prefix length is at most ${max}`
  }
  return null
}

/**
 * The trusted proxies from addresses and CIDR ranges, IPv4 or IPv6 (`10.0.0.0/8`, `fd00::/8`,
 * `127.0.0.1`, `::1`). Throws a RangeError naming the first entry that is neither. An IPv6 range
 * that covers IPv4-mapped addresses (`::ffff:0:0/96`) covers the IPv4 addresses they map.
 */
export function parseTrustedProxies(entries: readonly string[]): TrustedProxies {
  const list = new BlockList()
  for (const entry of entries) {
    const problem = trustProxyProblem(entry)
    if (problem !== null) throw new RangeError(`trustProxy: ${problem}`)
    const range = CIDR.exec(entry)
    const address = range ? (range[1] as string) : entry
    const type = isIP(address) === 4 ? 'ipv4' : 'ipv6'
    if (range) list.addSubnet(address, Number(range[2]), type)
    else list.addAddress(address, type)
  }
  return {
    size: entries.length,
    has(address) {
      const canonical = canonicalAddress(address)
      if (canonical === null) return false
      // A zone names the interface, not the address.
      const bare = canonical.split('%')[0] as string
      return list.check(bare, isIP(bare) === 4 ? 'ipv4' : 'ipv6')
    },
  }
}

/**
 * The client's address. `socket` is the TCP peer; `forwardedFor` the `X-Forwarded-For` header
 * (several headers joined by commas). The header counts only when the peer is a trusted proxy;
 * then the client is the right-most address in it that is not itself a trusted proxy (each proxy
 * appends the address it received the request from, so everything to the left of the first
 * untrusted hop may be forged). When every hop is trusted, the left-most one. A header that is
 * empty or holds anything but bare IP addresses is ignored: the peer is the client.
 */
export function clientAddressOf(
  socket: string,
  forwardedFor: string | null | undefined,
  trusted: TrustedProxies,
): string {
  const peer = canonicalAddress(socket) ?? socket
  if (trusted.size === 0 || forwardedFor == null || !trusted.has(peer)) return peer
  const hops: string[] = []
  for (const part of forwardedFor.split(',')) {
    const hop = canonicalAddress(part.trim())
    if (hop === null) return peer
    hops.push(hop)
  }
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i] as string
    if (!trusted.has(hop)) return hop
  }
  return hops[0] ?? peer
}
