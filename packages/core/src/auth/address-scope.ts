/**
 * The part of a client address that throttling counts. One IPv6 host usually holds a whole /64
 * and can pick any address in it, so IPv6 addresses count by their /64 prefix; anything else
 * (IPv4, names, `unknown`) counts as it is. Events still carry the full address.
 */
export function addressScope(address: string): string {
  const prefix = ipv6Prefix64(address)
  return prefix === null ? address : `${prefix}::/64`
}

const HEXTET = /^[0-9a-f]{1,4}$/i

/** The first four groups of an IPv6 address, normalised (`2001:db8:0:1`), or null for anything else. */
function ipv6Prefix64(address: string): string | null {
  const bare = address.replace(/^\[|\]$/g, '').split('%')[0] ?? ''
  if (!bare.includes(':') || bare.includes('.')) return null
  const halves = bare.split('::')
  if (halves.length > 2) return null
  const head = halves[0] ? halves[0].split(':') : []
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : []
  const missing = 8 - head.length - tail.length
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null
  const groups = [...head, ...Array<string>(missing).fill('0'), ...tail]
  if (!groups.every((group) => HEXTET.test(group))) return null
  return groups
    .slice(0, 4)
    .map((group) => Number.parseInt(group, 16).toString(16))
    .join(':')
}
