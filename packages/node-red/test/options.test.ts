import { describe, expect, test } from 'vitest'
import { flowadmin } from './load.js'

const good = { url: 'https://flowadmin.example:1880', clientId: 'fleet', clientSecret: 'secret' }

/** Both exports refuse the same options with the same message. */
function refusal(options: unknown): string {
  const messages = [flowadmin.adminAuth, flowadmin.httpAdminMiddleware].map((make) => {
    try {
      make(options as never)
    } catch (error) {
      return (error as Error).message
    }
    return 'accepted'
  })
  expect(messages[1]).toBe(messages[0])
  return messages[0] ?? ''
}

describe('options', () => {
  test('the documented options give a complete adminAuth and a middleware', () => {
    const adminAuth = flowadmin.adminAuth(good)
    expect(adminAuth.type).toBe('credentials')
    expect(Object.keys(adminAuth).sort()).toEqual(['authenticate', 'tokens', 'type', 'users'])
    expect(typeof flowadmin.httpAdminMiddleware(good)).toBe('function')
  })

  test('the client secret is nowhere on the adminAuth object Node-RED keeps in its settings', () => {
    expect(JSON.stringify(flowadmin.adminAuth(good))).not.toContain('secret')
  })

  test.each([
    [undefined, '@flowadmin/node-red: options must be an object: { url, clientId, clientSecret }'],
    [{ ...good, url: undefined }, '@flowadmin/node-red: url is missing'],
    [
      { ...good, url: 'flowadmin.example' },
      '@flowadmin/node-red: url is not a valid URL: "flowadmin.example"',
    ],
    [{ ...good, url: 'ftp://flowadmin.example' }, 'url must start with https:// or http://'],
    [{ ...good, url: 'https://fleet:pw@flowadmin.example' }, 'url must not contain a user or password'],
    [{ ...good, url: 'https://flowadmin.example/?a=1' }, 'url must not have a query or fragment'],
    [{ ...good, clientId: '' }, '@flowadmin/node-red: clientId is missing or empty'],
    [
      { ...good, clientSecret: undefined },
      'clientSecret is missing (is the environment variable that holds it set?)',
    ],
    [{ ...good, cacheMs: -1 }, 'cacheMs must be a whole number of milliseconds from 0 to 5000'],
    [{ ...good, timeoutMs: 0 }, 'timeoutMs must be a whole number of milliseconds from 1 to 60000, got 0'],
    [
      { ...good, timeoutMs: '3000' },
      'timeoutMs must be a whole number of milliseconds from 1 to 60000, got "3000"',
    ],
    [{ ...good, middleware: [() => {}, 'x'] }, 'middleware must be a function or an array of functions'],
    [{ ...good, log: 'console' }, 'log must be a function, got "console"'],
    [
      { ...good, cachems: 100 },
      'unknown option "cachems"; the options are url, clientId, clientSecret, cacheMs',
    ],
  ])('%j is refused with a message naming the option', (options, message) => {
    expect(refusal(options)).toContain(message)
  })

  test('a cacheMs above 5000 is refused at settings load, saying what it would cost', () => {
    expect(refusal({ ...good, cacheMs: 60_000 })).toBe(
      '@flowadmin/node-red: cacheMs must be a whole number of milliseconds from 0 to 5000 ' +
        '(a revoked token stays usable on this instance for up to cacheMs), got 60000',
    )
  })

  test.each([
    'http://flowadmin.example:1880',
    'http://10.0.0.5',
    'http://[fd00::1]:1880',
    'http://127.0.0.1.nip.io',
  ])(
    'plain http to another host (%s) is refused at start: the secret and tokens would travel in clear',
    (url) => {
      const host = new URL(url).hostname
      expect(refusal({ ...good, url })).toBe(
        `@flowadmin/node-red: url is plain http to ${host}, so the client secret, passwords and tokens would cross the network in clear: ` +
          'use https://, or set allowInsecureHttp: true if that network is trusted (see the README)',
      )
    },
  )

  test.each([
    'http://127.0.0.1:1880',
    'http://127.8.9.10',
    'http://[::1]:1880/flowadmin',
    'http://localhost:1880',
    'http://LOCALHOST.',
  ])('plain http on this host (%s) is accepted: it never leaves the machine', (url) => {
    expect(refusal({ ...good, url })).toBe('accepted')
  })

  test('allowInsecureHttp: true accepts plain http to another host; it must be a boolean', () => {
    expect(refusal({ ...good, url: 'http://flowadmin.internal', allowInsecureHttp: true })).toBe('accepted')
    expect(refusal({ ...good, url: 'http://flowadmin.internal', allowInsecureHttp: false })).toContain(
      'url is plain http to flowadmin.internal',
    )
    expect(refusal({ ...good, allowInsecureHttp: 'yes' })).toBe(
      '@flowadmin/node-red: allowInsecureHttp must be true or false, got "yes"',
    )
  })

  test('sso.url, where browsers reach flowadmin, follows the same rule', () => {
    const sso = { redirectUri: 'https://nodered.example/auth/strategy/callback' }
    const refused = (options: object) => {
      try {
        flowadmin.adminAuth(options as never)
      } catch (error) {
        return (error as Error).message
      }
      return 'accepted'
    }
    expect(refused({ ...good, sso: { ...sso, url: 'http://flowadmin.example' } })).toContain(
      '@flowadmin/node-red: sso.url is plain http to flowadmin.example',
    )
    expect(refused({ ...good, sso: { ...sso, url: 'http://localhost:1880' } })).toBe('accepted')
    expect(
      refused({ ...good, allowInsecureHttp: true, sso: { ...sso, url: 'http://flowadmin.example' } }),
    ).toBe('accepted')
  })

  test('a message never shows the client secret', () => {
    expect(refusal({ ...good, url: 'https://fleet:hunter2@flowadmin.example' })).not.toContain('hunter2')
  })

  test('cacheMs 5000, a path prefix and nested middleware arrays are accepted', () => {
    const options = {
      ...good,
      url: 'https://proxy.example/flowadmin/',
      cacheMs: 5000,
      middleware: [[() => {}], () => {}],
    }
    expect(refusal(options)).toBe('accepted')
  })
})
