// The fuzzer's requests at the sign-in page (its forms and the passkey button's calls), a
// person's second factor and their passkeys: mostly well-formed, with the browser's cookies (a
// binding of the page's form, or not), a cross-site mark, answers to challenges never given.
import fc from 'fast-check'
import { type FuzzBody, oddText, sometimes } from './fuzz-bodies.js'
import { pathFor } from './fuzz-paths.js'
import type { Part } from './fuzz-wire.js'

type Header = [string, Part[]]

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
/** `length` characters of base64url. */
const base64url = (length: number) =>
  fc
    .array(fc.integer({ min: 0, max: 63 }), { minLength: length, maxLength: length })
    .map((digits) => digits.map((digit) => BASE64URL[digit]).join(''))

/** The browser's cookies: a binding of the page's form (43 characters), odd ones, a carried start. */
export const signInCookies: fc.Arbitrary<Header[]> = fc
  .tuple(
    fc.oneof(
      { weight: 6, arbitrary: base64url(43) },
      fc.constantFrom('', 'x', '__proto__', '%00', 'a'.repeat(44)),
      oddText.map((text) => encodeURIComponent(text)),
    ),
    sometimes(
      fc.oneof(
        base64url(120),
        oddText.map((text) => encodeURIComponent(text)),
      ),
      4,
    ),
    fc.constantFrom<string | null>(null, null, null, 'same-origin', 'cross-site', 'same-site', 'none'),
  )
  .map(([binding, start, site]) => {
    const cookies = [`flowadmin_sso=${binding}`, ...(start === null ? [] : [`flowadmin_sso_start=${start}`])]
    return [
      ['Cookie', [cookies.join('; ')]] as Header,
      ...(site === null ? [] : [['Sec-Fetch-Site', [site]] as Header]),
    ]
  })

/** A field of the page's forms: a likely value, odd text, a long one, or missing. */
const formField = (likely: readonly string[]) =>
  fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom(...likely) },
    { weight: 2, arbitrary: oddText },
    { weight: 1, arbitrary: fc.integer({ min: 65, max: 5_000 }).map((n) => 'f'.repeat(n)) },
    { weight: 2, arbitrary: fc.constant(null) },
  )

const FORM_FIELDS = {
  username: ['admin', 'viewer', 'nobody'],
  password: ['admin-pw', 'wrong', ''],
  ticket: ['', 'not-a-ticket', 'A'.repeat(43)],
  code: ['123456', '000000', 'abcde-fghij', ''],
  return_to: ['/', '/?view=tokens', 'https://evil.example/', '//evil.example', '/\\evil'],
  client_id: ['fleet', 'service-editor', ''],
  redirect_uri: ['https://nodered.example/cb', 'https://evil.example/'],
  code_challenge: ['E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', 'short'],
  state: ['s', '\u0000'],
} as const

/** A form of the sign-in page: some of its fields, as it sends them or not. */
const signInForm: fc.Arbitrary<FuzzBody> = fc
  .tuple(
    ...(Object.entries(FORM_FIELDS) as Array<[string, readonly string[]]>).map(([name, likely]) =>
      fc.tuple(fc.constant(name), formField(likely)),
    ),
  )
  .chain((fields) => {
    const pairs = fields.filter((pair): pair is [string, string] => pair[1] !== null)
    return fc.oneof(
      {
        weight: 8,
        arbitrary: fc.constant<FuzzBody>({ format: 'form', parts: [new URLSearchParams(pairs).toString()] }),
      },
      fc.constant<FuzzBody>({ format: 'json', parts: [JSON.stringify(Object.fromEntries(pairs))] }),
      fc.uint8Array({ maxLength: 64 }).map((bytes): FuzzBody => ({ format: 'other', parts: [bytes] })),
    )
  })

/** A browser's client data carrying `challenge`, base64url: what a WebAuthn answer holds. */
const clientData = (challenge: string, type: string) =>
  Buffer.from(JSON.stringify({ type, challenge, origin: 'http://localhost:1880' })).toString('base64url')

/** An answer of an authenticator to a challenge this server never gave, or no answer at all. */
const webauthnAnswer: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc
      .tuple(
        fc.oneof(base64url(75), base64url(16), oddText),
        fc.constantFrom('webauthn.get', 'webauthn.create'),
        fc.oneof(base64url(22), oddText),
      )
      .map(([challenge, type, id]) => ({
        id,
        rawId: id,
        type: 'public-key',
        response: {
          clientDataJSON: clientData(challenge, type),
          authenticatorData: 'AAAA',
          signature: 'AAAA',
          attestationObject: 'o2NmbXRkbm9uZQ',
        },
        clientExtensionResults: {},
      })),
  },
  fc.constantFrom(null, 'text', {}, { response: { clientDataJSON: '***' } }, { id: 'x'.repeat(2_000) }),
  oddText.map((text) => ({ response: { clientDataJSON: text } })),
)

/** The passkey button's calls: `{response, destination}` or `{}`, or not JSON. */
const passkeyCall: fc.Arbitrary<FuzzBody> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .tuple(
        webauthnAnswer,
        fc.constantFrom<unknown>({ return_to: '/' }, { return_to: 'https://evil.example/' }, null, 'x'),
      )
      .map(
        ([response, destination]): FuzzBody => ({
          format: 'json',
          parts: [JSON.stringify({ response, destination })],
        }),
      ),
  },
  fc
    .constantFrom('{}', '[]', 'null', '{"response":', '')
    .map((text): FuzzBody => ({ format: 'json', parts: [text] })),
  fc.constant<FuzzBody>({ format: 'form', parts: ['response=x'] }),
)

/** `POST /auth/mfa/totp/confirm`: a code, right in form, or not. */
const confirmBody: fc.Arbitrary<FuzzBody> = fc
  .oneof(
    {
      weight: 6,
      arbitrary: fc
        .constantFrom('123456', '000000', '1', 'x'.repeat(65))
        .map((code) => JSON.stringify({ code })),
    },
    fc.constantFrom('{}', '{"code":123456}', '{"code":null}', 'code=123456', '{"code":"1","extra":1}'),
  )
  .map((text): FuzzBody => ({ format: 'json', parts: [text] }))

/** `POST /auth/passkeys`: a name and a registration answer to a challenge never given. */
const registrationBody: fc.Arbitrary<FuzzBody> = fc
  .tuple(fc.oneof(fc.constantFrom('Laptop', '', '   ', 'x'.repeat(65)), oddText), webauthnAnswer)
  .map(([name, response]): FuzzBody => ({ format: 'json', parts: [JSON.stringify({ name, response })] }))

const noBody = fc.constant<FuzzBody>({ format: 'other', parts: [] })

/** An aim of the fuzzer here: a route, its usual method, its paths, cookies or a bearer, bodies. */
export interface SignInAim {
  aim: string
  method: string
  path: fc.Arbitrary<string>
  /** Whether the bearer token (rather than the page's cookies) is what lets the request in. */
  bearer: boolean
  body: fc.Arbitrary<FuzzBody>
  weight: number
}

const paths = (...candidates: string[]) => fc.constantFrom(...candidates).chain(pathFor)

/** The routes of the sign-in page, a person's second factor and their passkeys. */
export const SIGN_IN_AIMS: readonly SignInAim[] = [
  { aim: 'signin-page', method: 'GET', path: paths('/auth/signin'), bearer: false, body: noBody, weight: 2 },
  {
    aim: 'signin-form',
    method: 'POST',
    path: paths('/auth/signin', '/auth/signin/code', '/auth/signin/enrol', '/auth/signin/continue'),
    bearer: false,
    body: signInForm,
    weight: 6,
  },
  {
    aim: 'signin-passkey',
    method: 'POST',
    path: paths('/auth/signin/passkey/options', '/auth/signin/passkey'),
    bearer: false,
    body: passkeyCall,
    weight: 6,
  },
  { aim: 'mfa', method: 'GET', path: paths('/auth/mfa'), bearer: true, body: noBody, weight: 1 },
  { aim: 'mfa-start', method: 'POST', path: paths('/auth/mfa/totp'), bearer: true, body: noBody, weight: 1 },
  {
    aim: 'mfa-confirm',
    method: 'POST',
    path: paths('/auth/mfa/totp/confirm'),
    bearer: true,
    body: confirmBody,
    weight: 2,
  },
  {
    aim: 'mfa-remove',
    method: 'DELETE',
    path: fc.constantFrom('/auth/mfa', '/auth/mfa?user=viewer', '/auth/mfa?user=admin', '/auth/mfa?user='),
    bearer: true,
    body: noBody,
    weight: 2,
  },
  {
    aim: 'passkeys',
    method: 'GET',
    path: paths('/auth/passkeys'),
    bearer: true,
    body: noBody,
    weight: 1,
  },
  {
    aim: 'passkey-options',
    method: 'POST',
    path: paths('/auth/passkeys/options'),
    bearer: true,
    body: noBody,
    weight: 1,
  },
  {
    aim: 'passkey-register',
    method: 'POST',
    path: paths('/auth/passkeys'),
    bearer: true,
    body: registrationBody,
    weight: 2,
  },
  {
    aim: 'passkey-remove',
    method: 'DELETE',
    path: fc.oneof(
      paths('/auth/passkeys/Y3JlZA', '/auth/passkeys/unknown'),
      oddText.map((text) => `/auth/passkeys/${encodeURIComponent(text)}`),
    ),
    bearer: true,
    body: noBody,
    weight: 2,
  },
]
