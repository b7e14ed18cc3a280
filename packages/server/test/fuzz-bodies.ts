// Request bodies for the fuzzer: mostly well-formed, often hostile (deep nesting, huge strings,
// invalid UTF-8, prototype keys, duplicate keys, values of the wrong type, the wrong format).
import fc from 'fast-check'
import { type Part, VICTIMS } from './fuzz-wire.js'

/** A body and the format it is written in (the Content-Type is chosen from it, usually). */
export interface FuzzBody {
  format: 'json' | 'form' | 'other'
  parts: Part[]
}

/** `arbitrary`'s value about once in `oneIn` draws, else null. */
export const sometimes = <T>(arbitrary: fc.Arbitrary<T>, oneIn: number): fc.Arbitrary<T | null> =>
  fc.oneof({ weight: oneIn - 1, arbitrary: fc.constant(null) }, { weight: 1, arbitrary })

/** Byte sequences that are not UTF-8: a lone continuation, an overlong `/`, a surrogate, ... */
const INVALID_UTF8 = [
  [0xff],
  [0x80],
  [0xc0, 0xaf],
  [0xed, 0xa0, 0x80],
  [0xe2, 0x82],
  [0xf8, 0x88, 0x80, 0x80, 0x80],
]

/** Strings a hostile client likes: unicode, controls, prototype names, traversal, log lines. */
export const oddText: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 24 }),
  fc.string({ unit: 'grapheme', maxLength: 12 }),
  fc.constantFrom(
    '__proto__',
    'constructor',
    'prototype',
    'toString',
    'hasOwnProperty',
    '\u0000',
    '\u202e',
    '../../../etc/passwd',
    'admin\n{"event":"login.succeeded","user":"admin"}',
    '%00',
    '{{7*7}}',
    "' OR 1=1 --",
  ),
)

const bool = fc.constantFrom('true', 'false')
const wrongType = fc.constantFrom(
  '"true"',
  '"false"',
  '1',
  '0',
  'null',
  '[]',
  '{}',
  '1e999',
  '-0',
  '[true]',
  '{"value":true}',
  '""',
)
const enabledValue = fc.oneof({ weight: 6, arbitrary: bool }, { weight: 2, arbitrary: wrongType })
const repeated = (text: string) => fc.integer({ min: 16, max: 70_000 }).map((n) => text.repeat(n))

/** One extra `"key":value` member of a JSON object. */
const extraMember: fc.Arbitrary<string> = fc.oneof(
  bool.map((b) => `"__proto__":{"enabled":${b}}`),
  bool.map((b) => `"constructor":{"prototype":{"enabled":${b}}}`),
  bool.map((b) => `"prototype":{"enabled":${b}}`),
  enabledValue.map((value) => `"enabled":${value}`),
  repeated('a').map((pad) => `"pad":"${pad}"`),
  fc.integer({ min: 10, max: 30_000 }).map((d) => `"deep":${'['.repeat(d)}${']'.repeat(d)}`),
  fc.integer({ min: 10, max: 8_000 }).map((d) => `"nest":${'{"a":'.repeat(d)}1${'}'.repeat(d)}`),
  oddText.map((text) => `${JSON.stringify(text)}:${JSON.stringify(text)}`),
  fc.constantFrom('"n":1e999', '"__proto__":null', '"\\u0000":0', '"enabled\\u0000":false', '"ENABLED":true'),
)

/** A JSON object text: `members` and maybe `own` (the field that matters), in a random order. */
const jsonObject = (own: fc.Arbitrary<string | null>): fc.Arbitrary<string> =>
  fc.tuple(own, fc.array(extraMember, { maxLength: 3 }), fc.nat()).map(([member, extras, at]) => {
    const members = [...extras]
    if (member !== null) members.splice(at % (members.length + 1), 0, member)
    return `{${members.join(',')}}`
  })

/** Wraps or damages a body text: BOM, whitespace, trailing bytes, invalid UTF-8, UTF-16, a cut. */
const damaged = (text: fc.Arbitrary<string>): fc.Arbitrary<Part[]> =>
  fc.oneof(
    { weight: 14, arbitrary: text.map((t) => [t]) },
    text.map((t) => [`\ufeff${t}`]),
    text.map((t) => [` \r\n\t${t}\n `]),
    fc.tuple(text, fc.constantFrom('x', '}', ',', '{}', '\u0000', ' //')).map(([t, tail]) => [t + tail]),
    fc
      .tuple(text, fc.constantFrom(...INVALID_UTF8), fc.nat())
      .map(([t, bytes, at]) => [
        t.slice(0, at % (t.length + 1)),
        new Uint8Array(bytes),
        t.slice(at % (t.length + 1)),
      ]),
    text.map((t) => [Buffer.from(t, 'utf16le')]),
    fc.tuple(text, fc.nat()).map(([t, at]) => [t.slice(0, at % (t.length + 1))]),
  )

/** `PUT /nodes/...`: `{"enabled": <boolean>}`, usually. */
export const enableBody: fc.Arbitrary<FuzzBody> = fc.oneof(
  { weight: 16, arbitrary: damaged(jsonObject(enabledValue.map((v) => `"enabled":${v}`))).map(json) },
  { weight: 2, arbitrary: damaged(jsonObject(fc.constant(null))).map(json) },
  fc
    .constantFrom('[{"enabled":true}]', '"enabled"', 'null', 'true', '{"enabled":true}{"enabled":false}', '')
    .map((t) => json([t])),
  fc.constantFrom('enabled=true', 'enabled=false', 'enabled=false&enabled=true').map((t) => form([t])),
  fc.uint8Array({ maxLength: 64 }).map((bytes) => ({ format: 'other' as const, parts: [bytes] })),
)

const FIELDS = {
  client_id: ['service-admin', 'service-editor', 'node-red-admin', 'SERVICE-ADMIN', ''],
  grant_type: ['password', 'Password', 'client_credentials', 'refresh_token', ''],
  scope: ['*', 'read', '', 'read *', 'write', 'read,*', 'nodes.write'],
  username: ['admin', 'viewer', 'Admin', 'admin ', 'nobody', '__proto__', 'constructor'],
  password: ['admin-pw', 'viewer-pw', 'wrong', 'admin-pw ', ''],
} as const
type Field = keyof typeof FIELDS

/** A field's value: the right one, a likely one, odd text, a huge one, or missing (null). */
const fieldValue = (field: Field): fc.Arbitrary<string | null> =>
  fc.oneof(
    { weight: 20, arbitrary: fc.constant(FIELDS[field][0]) },
    { weight: 6, arbitrary: fc.constantFrom(...FIELDS[field]) },
    { weight: 2, arbitrary: oddText },
    { weight: 1, arbitrary: repeated('p').map((text) => text.slice(0, 20_000)) },
    { weight: 1, arbitrary: fc.constant(null) },
  )

const NON_STRINGS = ['1', 'true', 'null', '["admin"]', '{"$gt":""}', '1e999']

/** `POST /auth/token`: the five fields of the password grant, as a form or as JSON. */
export const tokenBody: fc.Arbitrary<FuzzBody> = fc
  .record({
    values: fc.tuple(...(Object.keys(FIELDS) as Field[]).map(fieldValue)),
    asJson: fc.boolean(),
    /** JSON: replace one value by a number, an array, ...; form: give one field twice. */
    twist: sometimes(fc.tuple(fc.nat(4), fc.constantFrom(...NON_STRINGS)), 8),
    extra: sometimes(fc.constantFrom('__proto__', 'constructor', 'a[b]', 'client_secret'), 5),
  })
  .chain(({ values, asJson, twist, extra }) => {
    const names = Object.keys(FIELDS) as Field[]
    const pairs = names.flatMap((name, i) =>
      values[i] == null ? [] : [[name, values[i]] as [string, string]],
    )
    if (extra !== null) pairs.push([extra, 'x'])
    if (asJson) {
      const members = pairs.map(([name, value], i) =>
        twist !== null && twist[0] === i
          ? `"${name}":${twist[1]}`
          : `${JSON.stringify(name)}:${JSON.stringify(value)}`,
      )
      return damaged(fc.constant(`{${members.join(',')}}`)).map(json)
    }
    if (twist !== null && pairs.length > 0) pairs.push(pairs[twist[0] % pairs.length] as [string, string])
    return fc.constant(form([new URLSearchParams(pairs).toString()]))
  })

/** A token in a revoke body: one that may be revoked, a dead one, or garbage. */
const revokedToken: fc.Arbitrary<Part> = fc.oneof(
  { weight: 4, arbitrary: fc.nat(VICTIMS - 1).map((victim): Part => ({ token: { victim } })) },
  { weight: 1, arbitrary: fc.constant<Part>({ token: 'dead' }) },
  {
    weight: 2,
    arbitrary: fc.oneof(
      oddText,
      repeated('t').map((t) => t.slice(0, 70_000)),
    ),
  },
)

/** `POST /auth/revoke`: `token` as a form field or in JSON, with twists. */
export const revokeBody: fc.Arbitrary<FuzzBody> = fc.oneof(
  { weight: 4, arbitrary: revokedToken.map((t) => form(['token=', encodeText(t)])) },
  { weight: 4, arbitrary: revokedToken.map((t) => json(['{"token":', ...quoted(t), '}'])) },
  revokedToken.map((t) => form(['%74oken=', encodeText(t), '&other=1'])),
  revokedToken.map((t) => form(['token=x&token=', encodeText(t)])),
  revokedToken.map((t) => json(['{"token":"x","token":', ...quoted(t), '}'])),
  revokedToken.map((t) => json(['{"token":[', ...quoted(t), ']}'])),
  revokedToken.map((t) => json(['{"__proto__":{"token":', ...quoted(t), '}}'])),
  fc.constantFrom('token=', '{"token":""}', '{"token":null}', '{}', '').map((t) => json([t])),
)

function json(parts: Part[]): FuzzBody {
  return { format: 'json', parts }
}
function form(parts: Part[]): FuzzBody {
  return { format: 'form', parts }
}
/** A token reference as it is (tokens are URL- and JSON-safe), or text encoded for a form. */
function encodeText(part: Part): Part {
  return typeof part === 'string' ? encodeURIComponent(part).replace(/%20/g, '+') : part
}
function quoted(part: Part): Part[] {
  return typeof part === 'string' ? [JSON.stringify(part)] : ['"', part, '"']
}

/** Random bytes, for routes that take no body. */
export const strayBody: fc.Arbitrary<FuzzBody> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<FuzzBody>({ format: 'other', parts: [] }) },
  fc.uint8Array({ maxLength: 256 }).map((bytes): FuzzBody => ({ format: 'other', parts: [bytes] })),
  enableBody,
)
