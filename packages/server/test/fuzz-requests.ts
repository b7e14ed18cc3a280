// The fuzzer's requests: each aims at a route and is mostly right, with hostile twists in its
// method, path, headers, body and framing, so that valid, nearly valid and absurd requests mix.
import fc from 'fast-check'
import {
  enableBody,
  type FuzzBody,
  oddText,
  revokeBody,
  sometimes,
  strayBody,
  tokenBody,
} from './fuzz-bodies.js'
import { methodFor, nodesPath, oddName, pathFor } from './fuzz-paths.js'
import { reportBody, reporterAuth } from './fuzz-reports.js'
import { BREAKAGES, type Framing, type FuzzRequest, type Part, type TokenRef, VICTIMS } from './fuzz-wire.js'

/** Whose token a request carries: mostly the admin's, sometimes a reader's, a revoked one, ... */
const bearerRef: fc.Arbitrary<TokenRef> = fc.oneof(
  { weight: 10, arbitrary: fc.constant<TokenRef>('admin') },
  { weight: 2, arbitrary: fc.constant<TokenRef>('viewer') },
  { weight: 1, arbitrary: fc.constant<TokenRef>('dead') },
  { weight: 3, arbitrary: fc.nat(VICTIMS - 1).map((victim): TokenRef => ({ victim })) },
)
const scheme = fc.oneof(
  { weight: 16, arbitrary: fc.constant('Bearer ') },
  fc.constantFrom('bearer ', 'BEARER ', 'Bearer   ', 'Bearer\t', ' Bearer ', 'Bearer:'),
)
const authName = fc.constantFrom('Authorization', 'authorization', 'AUTHORIZATION')
const bearer = (ref: TokenRef, s = 'Bearer '): Part[] => [s, { token: ref }]

type Header = [string, Part[]]
const authorization: fc.Arbitrary<Header[]> = fc.oneof(
  {
    weight: 24,
    arbitrary: fc.tuple(authName, scheme, bearerRef).map(([n, s, t]): Header[] => [[n, bearer(t, s)]]),
  },
  { weight: 2, arbitrary: fc.constant<Header[]>([]) },
  fc.tuple(bearerRef, bearerRef).map(([a, b]): Header[] => [
    ['Authorization', bearer(a)],
    ['Authorization', bearer(b)],
  ]),
  fc
    .oneof(
      fc.constantFrom(
        'Bearer',
        'Basic YWRtaW46YWRtaW4tcHc=',
        'Bearer a b',
        'Bearer "x"',
        'Token abc',
        'Bearer ===',
      ),
      fc.integer({ min: 100, max: 8_000 }).map((n) => `Bearer ${'A'.repeat(n)}`),
      oddText.map((text) => `Bearer ${text}`),
    )
    .map((value): Header[] => [['Authorization', [value]]]),
  fc
    .tuple(bearerRef, fc.constantFrom(' extra', ',', '=', '"', '\u00e9', ', Bearer x'))
    .map(([t, tail]): Header[] => [['Authorization', [...bearer(t), tail]]]),
)

const TYPES = {
  json: [
    'application/json',
    'application/json; charset=utf-8',
    'APPLICATION/JSON',
    'application/json;charset=latin1',
  ],
  form: ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded; charset=UTF-8'],
  other: ['text/plain', 'application/octet-stream'],
}
const ODD_TYPES = [
  'text/plain',
  'multipart/form-data; boundary=x',
  'application/jsonx',
  '',
  'application/json, text/plain',
  'application/vnd.api+json',
  'application/x-www-form-urlencoded',
  'application/json',
  'Application/Json ; charset="UTF-16"',
  '*/*',
  'application/json; charset=\u00e9',
]
const contentType = (body: FuzzBody): fc.Arbitrary<Header[]> =>
  fc.oneof(
    {
      weight: 20,
      arbitrary: fc.constantFrom(...TYPES[body.format]).map((t): Header[] => [['Content-Type', [t]]]),
    },
    { weight: 3, arbitrary: fc.constantFrom(...ODD_TYPES).map((t): Header[] => [['Content-Type', [t]]]) },
    fc.constant<Header[]>([]),
    fc.constantFrom(...TYPES[body.format]).map((t): Header[] => [
      ['Content-Type', [t]],
      ['content-type', [t]],
    ]),
  )

const extraHeader: fc.Arbitrary<Header[]> = fc.oneof(
  fc.constantFrom<Header[]>(
    [['X-Forwarded-For', ['10.0.0.1, 127.0.0.1']]],
    [['Cookie', ['a=b; __proto__=x']]],
    [['Expect', ['100-continue']]],
    [['Content-Encoding', ['gzip']]],
    [['Origin', ['http://evil.example']]],
  ),
  // A line break would start another header line, unseen by the oracle.
  oddText.map((text): Header[] => [['X-Odd', [text.replace(/[\r\n]/g, '')]]]),
  fc.integer({ min: 1_000, max: 6_000 }).map((n): Header[] => [['X-Big', ['b'.repeat(n)]]]),
  fc.integer({ min: 24_000, max: 40_000 }).map((n): Header[] => [['X-Huge', ['h'.repeat(n)]]]),
  fc
    .integer({ min: 20, max: 150 })
    .map((n) => Array.from({ length: n }, (_, i): Header => [`X-Many-${i}`, ['v']])),
)

const framing: fc.Arbitrary<Framing> = fc.oneof(
  { weight: 24, arbitrary: fc.constant<Framing>('length') },
  { weight: 3, arbitrary: fc.constant<Framing>('chunked') },
  fc.constantFrom<Framing>('short', 'long', 'none'),
)

interface Aim {
  aim: string
  method: string
  path: fc.Arbitrary<string>
  auth: fc.Arbitrary<Header[]>
  body: fc.Arbitrary<FuzzBody>
}

/** A request aimed at one route. */
const aimedAt = ({ aim, method, path, auth, body }: Aim): fc.Arbitrary<FuzzRequest> =>
  body.chain((chosen) =>
    fc
      .record({
        method: methodFor(method),
        target: path,
        auth,
        type:
          chosen.parts.length > 0 || method === 'PUT' || method === 'POST'
            ? contentType(chosen)
            : fc.constant([]),
        extra: sometimes(extraHeader, 4),
        framing,
        breakage: sometimes(fc.constantFrom(...BREAKAGES), 25),
        from: fc.integer({ min: 2, max: 3 }),
      })
      .map(({ auth: a, type, extra, ...rest }) => ({
        ...rest,
        aim,
        headers: [...a, ...type, ...(extra ?? [])],
        body: chosen.parts,
      })),
  )

const noAuth = fc.oneof({ weight: 4, arbitrary: fc.constant<Header[]>([]) }, authorization)
const noBody = fc.oneof(
  { weight: 8, arbitrary: fc.constant<FuzzBody>({ format: 'other', parts: [] }) },
  strayBody,
)

/** One request of the fuzzer. */
export const fuzzRequest: fc.Arbitrary<FuzzRequest> = fc.oneof(
  {
    weight: 4,
    arbitrary: aimedAt({
      aim: 'login',
      method: 'GET',
      path: pathFor('/auth/login'),
      auth: noAuth,
      body: noBody,
    }),
  },
  {
    weight: 10,
    arbitrary: aimedAt({
      aim: 'token',
      method: 'POST',
      path: pathFor('/auth/token'),
      auth: noAuth,
      body: tokenBody,
    }),
  },
  {
    weight: 10,
    arbitrary: aimedAt({
      aim: 'revoke',
      method: 'POST',
      path: pathFor('/auth/revoke'),
      auth: authorization,
      body: revokeBody,
    }),
  },
  {
    weight: 5,
    arbitrary: aimedAt({
      aim: 'settings',
      method: 'GET',
      path: pathFor('/settings'),
      auth: authorization,
      body: noBody,
    }),
  },
  {
    weight: 5,
    arbitrary: aimedAt({
      aim: 'nodes',
      method: 'GET',
      path: pathFor('/nodes'),
      auth: authorization,
      body: noBody,
    }),
  },
  {
    weight: 10,
    arbitrary: aimedAt({ aim: 'node', method: 'GET', path: nodesPath, auth: authorization, body: noBody }),
  },
  {
    weight: 36,
    arbitrary: aimedAt({
      aim: 'toggle',
      method: 'PUT',
      path: nodesPath,
      auth: authorization,
      body: enableBody,
    }),
  },
  {
    weight: 12,
    arbitrary: aimedAt({
      aim: 'report',
      method: 'POST',
      path: pathFor('/audit/events'),
      auth: reporterAuth,
      body: reportBody,
    }),
  },
  {
    weight: 6,
    arbitrary: aimedAt({
      aim: 'stray',
      method: 'DELETE',
      path: fc.oneof(
        oddName.map((name) => `/${name}`),
        fc.constantFrom('/', '*', '/admin', '/auth', '/nodes/'),
      ),
      auth: noAuth,
      body: strayBody,
    }),
  },
)
