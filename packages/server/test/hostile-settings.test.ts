// The settings that guard against hostile clients: trustProxy, httpAdminCors, apiMaxLength and
// httpServer (timeouts, header size).
import { describe, expect, it } from 'vitest'
import { parse, refusal } from './settings-parse.js'

describe('trustProxy', () => {
  it('takes addresses and CIDR ranges of both families; none by default', () => {
    expect(parse({}).trustProxy).toEqual([])
    expect(parse({ trustProxy: ['10.0.0.0/8', '127.0.0.1', 'fd00::/8', '::1'] }).trustProxy).toEqual([
      '10.0.0.0/8',
      '127.0.0.1',
      'fd00::/8',
      '::1',
    ])
  })

  it('names each entry that is not an address or a range', () => {
    expect(refusal({ trustProxy: ['10.0.0.0/33', 'proxy.internal', 7] }).split('\n')).toEqual([
      'settings.json: trustProxy[0]: "10.0.0.0/33": an IPv4 prefix length is at most 32',
      'settings.json: trustProxy[1]: "proxy.internal" is not an IP address or a CIDR range (e.g. "10.0.0.0/8", "fd00::/8", "127.0.0.1")',
      'settings.json: trustProxy[2]: must be a string',
    ])
    expect(refusal({ trustProxy: '10.0.0.1' })).toBe('settings.json: trustProxy: must be a list of addresses')
  })
})

describe('httpAdminCors', () => {
  it('is off by default; takes one origin or a list', () => {
    expect(parse({}).httpAdminCors).toBeNull()
    expect(parse({ httpAdminCors: { origin: 'https://editor.example' } }).httpAdminCors).toEqual({
      origins: ['https://editor.example'],
    })
    expect(
      parse({ httpAdminCors: { origin: ['https://a.example', 'http://127.0.0.1:8080'] } }).httpAdminCors,
    ).toEqual({ origins: ['https://a.example', 'http://127.0.0.1:8080'] })
  })

  it('refuses wildcards, paths, other schemes and other options, naming the field', () => {
    expect(refusal({ httpAdminCors: { origin: ['*', 'https://A.example/', 'ftp://files.example'] } })).toBe(
      [
        'settings.json: httpAdminCors.origin[0]: "*" is not an origin (e.g. "https://editor.example")',
        'settings.json: httpAdminCors.origin[1]: "https://A.example/" is not an origin as browsers send it; write "https://a.example"',
        'settings.json: httpAdminCors.origin[2]: "ftp://files.example" is not an http:// or https:// origin',
      ].join('\n'),
    )
    expect(refusal({ httpAdminCors: { origin: [] } })).toBe(
      'settings.json: httpAdminCors.origin: must list at least one origin',
    )
    expect(refusal({ httpAdminCors: { origin: true } })).toBe(
      'settings.json: httpAdminCors.origin: must be an origin such as "https://editor.example" or a non-empty list of them',
    )
    expect(refusal({ httpAdminCors: { origin: 'https://a.example', methods: 'GET,PUT' } })).toBe(
      'settings.json: httpAdminCors.methods: unknown setting',
    )
    expect(refusal({ httpAdminCors: {} })).toBe('settings.json: httpAdminCors.origin: is required')
  })
})

describe('apiMaxLength', () => {
  it.each([
    [undefined, 65_536],
    [1000, 1000],
    ['1000', 1000],
    ['512b', 512],
    ['64kb', 65_536],
    ['64KB', 65_536],
    ['5mb', 5 * 1024 * 1024],
    ['100mb', 100 * 1024 * 1024],
    // Node-RED's forms, read as its `bytes` package reads them (powers of 1024, rounded down).
    ['100kb', 100 * 1024],
    ['1.5mb', 1.5 * 1024 * 1024],
    ['0.5kb', 512],
    ['1.0001kb', 1024],
    ['5 MB', 5 * 1024 * 1024],
    ['0.09gb', Math.floor(0.09 * 1024 ** 3)],
  ])('%j is %d bytes', (given, bytes) => {
    expect(parse(given === undefined ? {} : { apiMaxLength: given }).apiMaxLength).toBe(bytes)
  })

  it.each([
    [0, 'must be at least 1'],
    [1.5, 'must be a whole number'],
    ['101mb', 'must be at most 104857600'],
    ['5gb', 'must be at most 104857600'],
    ['1tb', 'must be at most 104857600'],
    ['0kb', 'must be at least 1'],
    ['-1kb', 'must be a number of bytes or a size such as "64kb" or "1mb"'],
    ['1.5', 'must be a number of bytes or a size such as "64kb" or "1mb"'],
    ['1.5b', 'must be a number of bytes or a size such as "64kb" or "1mb"'],
    ['10 apples', 'must be a number of bytes or a size such as "64kb" or "1mb"'],
    ['5m', 'must be a number of bytes or a size such as "64kb" or "1mb"'],
    ['', 'must be a number of bytes or a size such as "64kb" or "1mb"'],
    [true, 'must be a number of bytes or a size such as "64kb" or "1mb"'],
  ])('refuses %j', (given, message) => {
    expect(refusal({ apiMaxLength: given })).toBe(`settings.json: apiMaxLength: ${message}`)
  })
})

describe('httpServer', () => {
  it('fills in the defaults around what is given', () => {
    expect(parse({}).httpServer).toEqual({
      headersTimeout: 10_000,
      requestTimeout: 30_000,
      keepAliveTimeout: 5_000,
      maxHeaderSize: 16_384,
    })
    expect(parse({ httpServer: { headersTimeout: 2_000, maxHeaderSize: 8_192 } }).httpServer).toEqual({
      headersTimeout: 2_000,
      requestTimeout: 30_000,
      keepAliveTimeout: 5_000,
      maxHeaderSize: 8_192,
    })
  })

  it('refuses values that would disable a limit or make no sense', () => {
    expect(refusal({ httpServer: { headersTimeout: 0, maxHeaderSize: 100, idle: 1 } }).split('\n')).toEqual([
      'settings.json: httpServer.headersTimeout: must be at least 1',
      'settings.json: httpServer.maxHeaderSize: must be at least 1024',
      'settings.json: httpServer.idle: unknown setting',
    ])
    expect(refusal({ httpServer: { headersTimeout: 40_000 } })).toBe(
      'settings.json: httpServer: headersTimeout (40000) must not be longer than requestTimeout (30000)',
    )
  })
})
