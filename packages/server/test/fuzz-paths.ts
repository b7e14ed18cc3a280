// Methods and request-targets for the fuzzer: the routes written the many ways a URL allows
// (escapes, dot segments, absolute form), module names valid and odd, and methods odd or wrong.
import fc from 'fast-check'
import { oddText } from './fuzz-bodies.js'
import { MODULES } from './target-server.js'

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'PROPFIND', 'CONNECT']
const ODD_METHODS = ['FOO', 'Put', 'GET\u00e9', 'M-SEARCH', 'PUT2']

/** Usually `method`, sometimes another one. */
export const methodFor = (method: string) =>
  fc.oneof(
    { weight: 30, arbitrary: fc.constant(method) },
    { weight: 2, arbitrary: fc.constantFrom(...METHODS) },
    { weight: 1, arbitrary: fc.constantFrom(...ODD_METHODS) },
  )

/** Each character percent-encoded where `flags` says so (hex in either case). */
function encodeSome(text: string, flags: boolean[], upper: boolean): string {
  return [...text]
    .map((char, i) => {
      if (!flags[i % Math.max(1, flags.length)]) return char
      const hex = [...Buffer.from(char, 'utf8')]
        .map((byte) => `%${byte.toString(16).padStart(2, '0')}`)
        .join('')
      return upper ? hex.toUpperCase() : hex
    })
    .join('')
}

/** `path` as written, or written otherwise: escapes, dot segments, absolute form, odd ends. */
export const pathFor = (path: string): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 12, arbitrary: fc.constant(path) },
    fc
      .tuple(fc.array(fc.boolean(), { minLength: 1, maxLength: 8 }), fc.boolean())
      .map(([flags, upper]) => `/${encodeSome(path.slice(1), flags, upper)}`),
    fc.constantFrom(
      `/x/..${path}`,
      `/x/%2e%2e${path}`,
      `/.${path}`,
      `/${path}`,
      `${path}/`,
      `${path}/..`,
      `${path}?a=1&b=%00`,
      `${path}#frag`,
      `http://evil.example${path}`,
      `${path}%00`,
      `${path};x`,
      `${path}%2F`,
      path.toUpperCase(),
      `/..${path}`,
    ),
  )

/** A module or node set name, written one of the ways the README allows. */
const knownName: fc.Arbitrary<string> = fc
  .tuple(fc.constantFrom(...MODULES), fc.nat(), fc.boolean(), fc.array(fc.boolean(), { maxLength: 12 }))
  .chain(([module, at, withSet, flags]) => {
    const set = module.sets[at % module.sets.length]?.name as string
    const name = withSet ? `${module.name}/${set}` : module.name
    return fc.oneof(
      { weight: 12, arbitrary: fc.constant(name) },
      fc.constant(name.replace('/', '%2F')),
      fc.constant(name.replace('@', '%40').replace('/', '%2f')),
      fc.boolean().map((upper) => encodeSome(name, flags.length > 0 ? flags : [true], upper)),
      fc.constantFrom(`${name}/`, `${name}%2F`, name.toUpperCase(), `${name}/extra/more`, `x/../${name}`),
      fc.constantFrom(name.replace('%', '%25').replace('@', '%2540'), `${name}%00`, `${name}%20`),
    )
  })

/** Names no module has: prototype keys, traversal, controls, broken escapes, long, unicode. */
export const oddName: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    '@scope',
    '@',
    '@/x',
    '@@a/b',
    '..%2F..%2Fetc%2Fpasswd',
    '%2e%2e',
    '%00',
    'a%00b',
    '%C0%AF',
    '%E2%80%AE',
    '%',
    '%zz',
    '',
    '/',
    'flowadmin-example-greeting/__proto__',
    '@flowadmin-examples/__proto__/x',
  ),
  fc.integer({ min: 200, max: 4_000 }).map((n) => 'n'.repeat(n)),
  oddText.map((text) => encodeURIComponent(text.replace(/[\ud800-\udfff]/g, ''))),
  oddText,
)

/** A path below /nodes/: mostly a module or node set, sometimes an odd name or prefix. */
export const nodesPath: fc.Arbitrary<string> = fc
  .tuple(
    fc.oneof({ weight: 5, arbitrary: knownName }, { weight: 1, arbitrary: oddName }),
    fc.oneof(
      { weight: 24, arbitrary: fc.constant('/nodes/') },
      fc.constantFrom(
        '/%6eodes/',
        '/x/../nodes/',
        '/nodes/./',
        'http://h.example/nodes/',
        '/nodes//',
        '/NODES/',
      ),
    ),
    fc.oneof({ weight: 10, arbitrary: fc.constant('') }, fc.constantFrom('?x=1', '#f', '?enabled=false')),
  )
  .map(([name, prefix, suffix]) => `${prefix}${name}${suffix}`)
