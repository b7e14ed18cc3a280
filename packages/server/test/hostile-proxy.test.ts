// Who the client is: the socket peer, or behind trusted reverse proxies the right-most address of
// X-Forwarded-For that is not a trusted proxy.
import { describe, expect, it } from 'vitest'
import {
  canonicalAddress,
  clientAddressOf,
  parseTrustedProxies,
  trustProxyProblem,
} from '../src/http/proxy.js'

describe('canonicalAddress', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:cb00:7107', '203.0.113.7'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['2001:DB8:0:0:0:0:0:1', '2001:db8::1'],
    ['[2001:db8::1]', '2001:db8::1'],
    ['fe80::1%eth0', 'fe80::1%eth0'],
  ])('%s is %s', (given, canonical) => {
    expect(canonicalAddress(given)).toBe(canonical)
  })

  it.each(['', 'unknown', '203.0.113.7:80', '[::1]:80', '01.2.3.4', '1.2.3', 'example.com', ' 1.2.3.4'])(
    '%j is not an address',
    (given) => {
      expect(canonicalAddress(given)).toBeNull()
    },
  )
})

describe('trusted proxies (CIDR matching)', () => {
  const proxies = parseTrustedProxies([
    '10.0.0.0/8',
    '192.168.1.7',
    '2001:db8:aa::/48',
    '::1',
    '172.16.5.9/32',
  ])

  it.each([
    ['10.0.0.0', true],
    ['10.255.255.255', true],
    ['11.0.0.0', false],
    ['9.255.255.255', false],
    ['192.168.1.7', true],
    ['192.168.1.8', false],
    ['172.16.5.9', true],
    ['172.16.5.10', false],
    ['::ffff:10.1.2.3', true],
    ['2001:db8:aa::1', true],
    ['2001:db8:aa:ffff:ffff:ffff:ffff:ffff', true],
    ['2001:DB8:AA:0:0:0:0:5', true],
    ['2001:db8:ab::1', false],
    ['::1', true],
    ['0:0:0:0:0:0:0:1', true],
    ['::2', false],
    ['unknown', false],
    ['', false],
  ])('%j trusted: %s', (address, trusted) => {
    expect(proxies.has(address)).toBe(trusted)
  })

  it('covers a whole family with /0 and a single host with /32 or /128', () => {
    const everyIPv4 = parseTrustedProxies(['0.0.0.0/0'])
    expect(everyIPv4.has('1.2.3.4')).toBe(true)
    expect(everyIPv4.has('255.255.255.255')).toBe(true)
    expect(everyIPv4.has('2001:db8::1')).toBe(false)
    const host = parseTrustedProxies(['2001:db8::7/128'])
    expect(host.has('2001:db8::7')).toBe(true)
    expect(host.has('2001:db8::8')).toBe(false)
  })

  it('matches a range whose address has host bits set as its network', () => {
    expect(parseTrustedProxies(['10.1.2.3/8']).has('10.200.0.1')).toBe(true)
  })

  it('is empty by default', () => {
    const none = parseTrustedProxies([])
    expect(none.size).toBe(0)
    expect(none.has('127.0.0.1')).toBe(false)
  })

  it.each([
    ['10.0.0.0/33', '"10.0.0.0/33": an IPv4 prefix length is at most 32'],
    ['::/129', '"::/129": an IPv6 prefix length is at most 128'],
    ['10.0.0.0/', '"10.0.0.0/" is not an IP address or a CIDR range'],
    ['10.0.0.0/-1', '"10.0.0.0/-1" is not an IP address or a CIDR range'],
    ['example.com', '"example.com" is not an IP address or a CIDR range'],
    ['10.0.0', '"10.0.0" is not an IP address or a CIDR range'],
    ['fe80::1%eth0', '"fe80::1%eth0" is not an IP address or a CIDR range'],
    ['', '"" is not an IP address or a CIDR range'],
  ])('refuses %j', (entry, message) => {
    expect(trustProxyProblem(entry)).toContain(message)
    expect(() => parseTrustedProxies([entry])).toThrow(RangeError)
  })
})

describe('clientAddressOf', () => {
  const proxies = parseTrustedProxies(['10.0.0.0/8', '2001:db8:aa::/48'])
  const client = (socket: string, forwardedFor?: string) => clientAddressOf(socket, forwardedFor, proxies)

  it('is the socket address when there are no trusted proxies, whatever the header says', () => {
    const none = parseTrustedProxies([])
    expect(clientAddressOf('203.0.113.7', '198.51.100.1', none)).toBe('203.0.113.7')
    expect(clientAddressOf('::ffff:203.0.113.7', undefined, none)).toBe('203.0.113.7')
  })

  it('ignores the header from a peer that is not a trusted proxy', () => {
    expect(client('203.0.113.7', '198.51.100.1')).toBe('203.0.113.7')
    expect(client('11.0.0.1', '198.51.100.1')).toBe('11.0.0.1')
  })

  it('is the socket address of a trusted proxy that sends no header', () => {
    expect(client('10.0.0.2')).toBe('10.0.0.2')
    expect(clientAddressOf('10.0.0.2', null, proxies)).toBe('10.0.0.2')
  })

  it('takes the address a trusted proxy appended', () => {
    expect(client('10.0.0.2', '198.51.100.1')).toBe('198.51.100.1')
    expect(client('::ffff:10.0.0.2', '198.51.100.1')).toBe('198.51.100.1')
    expect(client('2001:db8:aa::5', '2001:db8:1::9')).toBe('2001:db8:1::9')
  })

  it('walks right to left past trusted proxies, stopping at the first untrusted hop', () => {
    // A client may send its own X-Forwarded-For: everything left of the proxy's entry is forged.
    expect(client('10.0.0.2', '1.1.1.1, 198.51.100.1')).toBe('198.51.100.1')
    expect(client('10.0.0.2', '1.1.1.1, 198.51.100.1, 10.9.9.9')).toBe('198.51.100.1')
    expect(client('10.0.0.2', '203.0.113.50,198.51.100.1,10.9.9.9,10.8.8.8')).toBe('198.51.100.1')
    expect(client('10.0.0.2', '10.0.0.1, 198.51.100.1, 2001:db8:aa::3')).toBe('198.51.100.1')
  })

  it('takes the left-most hop when every hop is a trusted proxy', () => {
    expect(client('10.0.0.2', '10.3.3.3, 10.4.4.4')).toBe('10.3.3.3')
  })

  it('returns the address in canonical form', () => {
    expect(client('10.0.0.2', '::ffff:198.51.100.1')).toBe('198.51.100.1')
    expect(client('10.0.0.2', '2001:DB8:0:0::1')).toBe('2001:db8::1')
    expect(client('10.0.0.2', '[2001:db8::1]')).toBe('2001:db8::1')
  })

  it.each([
    '',
    ' ',
    'garbage',
    '198.51.100.1, garbage',
    'garbage, 198.51.100.1',
    '198.51.100.1,',
    ',198.51.100.1',
    '198.51.100.1:4711',
    '[2001:db8::1]:4711',
    'unknown',
    '198.51.100.1;10.0.0.3',
    'for=198.51.100.1',
    '999.1.1.1',
  ])('falls back to the socket address for the malformed header %j', (header) => {
    expect(client('10.0.0.2', header)).toBe('10.0.0.2')
  })
})
