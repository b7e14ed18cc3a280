import type {
  AuthorizationRequest,
  FactorError,
  LoginError,
  TotpEnrolment,
  VerifiedPerson,
} from '@flowadmin/core'
import { type Context, Hono } from 'hono'
import * as v from 'valibot'
import { readBody } from '../body.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { adminBodyError, errorAnswerOf, toResponse } from '../errors.js'
import {
  adminErrorContent,
  describe,
  htmlPage,
  json,
  NO_STORE_HEADERS,
  RETRY_AFTER,
  schemaOf,
} from '../openapi.js'
import { html, messagePage, signInPage } from '../sign-in-page.js'
import { describeUserAgent } from '../user-agent.js'
import { noStore } from './auth.js'
import {
  AUTHORIZE_EXAMPLE,
  authorizationProblem,
  bindingCookie,
  bindingOf,
  COOKIE_SECONDS,
  MAX_STATE,
  redirectTo,
  returnPathProblem,
  S256_CHALLENGE,
  SSO_CODE_FRAGMENT,
  secureBinding,
  single,
  ssoRefusal,
  toProvider,
} from './sso.js'

// flowadmin's own sign-in page, for its own users: the console's login and a resource server's
// authorization request (`GET /auth/authorize`, a Node-RED editor's "Sign in with …") both show
// it, the browser bound by an HttpOnly cookie (a random value; nothing is stored before a right
// password), and the page carries where the sign-in ends (checked again at every step). It asks
// for the password, then the second factor the person has (a code, or a passkey alone), or an
// enrolment when the policy says they must have one. Between steps a ticket waits in the store,
// keyed by the cookie too, so it serves only this browser. The end is the same one-time code
// single sign-on hands out: in the console's URL fragment, or at the resource server's redirect
// URI. Every step is a form POST, refused from another site (its cookie is SameSite=Lax, and
// `Sec-Fetch-Site` must be same-origin when the browser sends it), so the page works without
// script; the only script is the passkey button's, served by flowadmin itself.

/** The client a console's sign-in is checked for (the console trades its code as this client). */
const CONSOLE_CLIENT = 'service-editor'

const HTML = htmlPage(v.string())

const text = (max: number, name: string) =>
  v.pipe(
    v.string(`${name} must be text`),
    v.nonEmpty(`${name} is required`),
    v.maxLength(max, `${name} is too long`),
  )
const PasswordForm = v.object({ username: text(256, 'Username'), password: text(1024, 'Password') })
const CodeForm = v.object({ ticket: text(64, 'The sign-in'), code: text(64, 'The code') })
const TicketForm = v.object({ ticket: text(64, 'The sign-in') })

/** What the person sees of a refused step: a status and a sentence. */
const PASSWORD_REFUSAL: Record<
  LoginError['code'] | FactorError['code'],
  (error: LoginError | FactorError) => [400 | 401 | 429 | 503, string]
> = {
  invalid_credentials: () => [401, 'Wrong username or password.'],
  invalid_request: () => [400, 'Type your username and password.'],
  unsupported_grant_type: () => [400, 'Type your username and password.'],
  invalid_scope: () => [400, 'Type your username and password.'],
  mfa_required: () => [400, 'You must sign in with a second factor.'],
  throttled: (error) => [429, `Too many failed attempts. Try again in ${waitOf(error)}.`],
  temporarily_unavailable: (error) => [503, `The server is busy; retry in ${retryOf(error)} s.`],
  mfa_not_configured: () => [
    503,
    'You must set up a second factor, but flowadmin has no key for them yet: ask an administrator.',
  ],
  factor_exists: () => [400, 'A second factor was set up meanwhile: sign in again.'],
  enrolment_not_found: () => [400, 'The set-up was replaced meanwhile: sign in again.'],
  invalid_code: () => [401, 'That code is wrong, expired or used already.'],
}

/** Seconds the refusal says to wait, at least 1. */
const retryOf = (error: LoginError | FactorError): number => ('retryAfter' in error ? error.retryAfter : 1)
/** How long to wait, and until when (UTC: the server does not know the reader's zone). */
const waitOf = (error: LoginError | FactorError): string => {
  const seconds = retryOf(error)
  const until = new Date(Date.now() + seconds * 1000).toISOString().slice(11, 16)
  return `${seconds} seconds (at ${until} UTC)`
}

/** What the console may ask the page to say above the form (`notice`), by name. */
const NOTICES = {
  logged_out: 'You are logged out.',
  session_ended: 'Your session has ended (it expired or was revoked). Please log in again.',
  ended_here: 'You ended this session.',
  signed_out_everywhere: 'Signed out everywhere: every session and API token of yours has ended.',
  sign_in_failed: 'The sign-in did not complete. Please sign in again.',
} as const
type Notice = keyof typeof NOTICES
const noticeOf = (value: string | undefined): Notice | null =>
  value !== undefined && Object.hasOwn(NOTICES, value) ? (value as Notice) : null

/** What a person is told of a sign-in that is not there (never begun here, used, or past its time). */
const EXPIRED =
  'This sign-in was not started in this browser, was used already, or took too long. Start again.'

/**
 * Where a sign-in on the page ends: the console (a path of this service), or the resource server
 * whose authorization request the page carries. The page holds it in hidden fields.
 */
type Destination =
  | { returnTo: string; authorization: null }
  | { returnTo: null; authorization: AuthorizationRequest }

/** 32 random bytes, base64url: the value of a new sign-in cookie. */
function newBinding(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32))
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '')
}

/** A cookie value this page could have set: what a ticket is keyed by. */
const BINDING = /^[A-Za-z0-9_-]{43}$/

/** A refused code: wrong (401), or too many attempts (429), as the person is told. */
const codeRefusal = (error: FactorError): [401 | 429, string] =>
  error.code === 'throttled' || error.code === 'temporarily_unavailable'
    ? [429, 'Too many attempts. Wait a minute, then try again.']
    : [401, 'That code is wrong, expired or used already.']

export function signInRoutes(deps: RouteDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  const { core, basePath } = deps
  if (!core.authEnabled) return routes
  const home = `${basePath}/`
  const action = (step: string) => `${basePath}/auth/signin${step}`
  const restart = { href: action(''), label: 'Start again' }
  const sso = core.sso
  /** The passkey script, when passkeys are configured and the script is served. */
  const passkeyScript = core.passkeys.available ? deps.signInScript : undefined
  /** The destination as the page's hidden fields, sent back with each form. */
  const fieldsOfDestination = (destination: Destination): Record<string, string> =>
    destination.authorization === null
      ? { return_to: destination.returnTo }
      : {
          client_id: destination.authorization.clientId,
          redirect_uri: destination.authorization.redirectUri,
          code_challenge: destination.authorization.codeChallenge,
          ...(destination.authorization.state !== null && { state: destination.authorization.state }),
        }
  const hidden = (destination: Destination) =>
    Object.entries(fieldsOfDestination(destination)).map(
      ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
    )
  /**
   * The destination a form sent back, checked again as when the sign-in began (a registered
   * redirect URI, exactly; a PKCE S256 challenge; a path of this service); null when it does not hold.
   */
  const destinationOf = (fields: Record<string, unknown>): Destination | null => {
    const field = (name: string) => (typeof fields[name] === 'string' ? (fields[name] as string) : undefined)
    const clientId = field('client_id')
    if (clientId !== undefined) {
      const redirectUri = field('redirect_uri') ?? ''
      const codeChallenge = field('code_challenge') ?? ''
      const state = field('state') ?? null
      if (
        !core.redirectRegistered(clientId, redirectUri) ||
        !S256_CHALLENGE.test(codeChallenge) ||
        (state !== null && state.length > MAX_STATE)
      )
        return null
      return { returnTo: null, authorization: { clientId, redirectUri, codeChallenge, state } }
    }
    const returnTo = field('return_to') ?? home
    return returnPathProblem(returnTo, basePath) === null ? { returnTo, authorization: null } : null
  }
  /** Who the sign-in is for, when a resource server asked for it. */
  const forWhom = (destination: Destination) =>
    destination.authorization === null
      ? ''
      : html`<p class="for">Signing in to <strong>${destination.authorization.clientId}</strong></p>`

  /** A passkey button, hidden until the script finds that the browser can use passkeys. */
  const passkeyButton = (id: string, label: string, destination: Destination) =>
    html`<button type="button" id="${id}" class="secondary" data-base="${basePath}" data-destination="${JSON.stringify(fieldsOfDestination(destination))}" hidden>${label}</button>
<p class="error" role="alert" id="passkey-error" hidden></p>`

  /** The first step's page: the password form, the provider's button beside it when there is one. */
  const passwordPage = (
    status: number,
    destination: Destination,
    error: string | null,
    username = '',
    headers?: Record<string, string>,
    notice: Notice | null = null,
  ) =>
    signInPage({
      status,
      title: 'Log in',
      headers,
      script: passkeyScript,
      body: html`${forWhom(destination)}${notice === null ? '' : html`<p class="notice" role="status">${NOTICES[notice]}</p>`}
${
  core.signIn.hasUsers()
    ? html`<form method="post" action="${action('')}" aria-labelledby="title"${error === null ? '' : html` aria-describedby="form-error"`}>
${error === null ? '' : html`<p class="error" role="alert" id="form-error">${error}</p>`}
<label for="username">Username</label>
<input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus value="${username}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
${hidden(destination)}
<button type="submit">Log in</button>
</form>
${passkeyScript === undefined ? '' : passkeyButton('passkey-signin', 'Sign in with a passkey', destination)}`
    : ''
}
${
  sso === null
    ? ''
    : html`${core.signIn.hasUsers() ? html`<p class="or">or</p>` : ''}
<form method="post" action="${action('/provider')}">${hidden(destination)}<button type="submit" class="${core.signIn.hasUsers() ? 'secondary' : ''}">${sso.label}</button></form>`
}`,
    })

  /** The second step: a code of the authenticator app, or a recovery code. */
  const codePage = (
    status: number,
    destination: Destination,
    ticket: string,
    error: string | null,
    offer: { totp: boolean; passkey: boolean } = { totp: true, passkey: false },
    headers?: Record<string, string>,
  ) =>
    signInPage({
      status,
      title: 'Second factor',
      headers,
      script: offer.passkey ? passkeyScript : undefined,
      body: html`${forWhom(destination)}${
        offer.totp
          ? html`<form method="post" action="${action('/code')}" aria-labelledby="title"${error === null ? '' : html` aria-describedby="form-error"`}>
${error === null ? '' : html`<p class="error" role="alert" id="form-error">${error}</p>`}
<input type="hidden" name="ticket" value="${ticket}">${hidden(destination)}
<label for="code">Code from your authenticator app, or a recovery code</label>
<input id="code" name="code" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" required autofocus>
<button type="submit">Verify</button>
</form>`
          : offer.passkey
            ? html`<p>Your password was right. Finish with your passkey.</p>`
            : html`<p>Your account signs in with a passkey, which this page cannot offer now. Ask an administrator.</p>`
      }
${offer.passkey ? passkeyButton('passkey-second', offer.totp ? 'Use a passkey instead' : 'Sign in with your passkey', destination) : ''}`,
    })

  /** The enrolment a policy asks for: the new secret as a QR code and as text, and its first code. */
  const enrolPage = (
    status: number,
    destination: Destination,
    ticket: string,
    enrolment: TotpEnrolment,
    error: string | null,
    headers?: Record<string, string>,
  ) =>
    signInPage({
      status,
      headers,
      title: 'Set up a second factor',
      body: html`${forWhom(destination)}<p>An administrator requires a second factor for your account. Scan this code with an authenticator app, or type the secret into it, then enter the six-digit code it shows.</p>
<img class="qr" src="${`data:image/svg+xml;base64,${btoa(enrolment.qrSvg)}`}" alt="QR code of your new secret for an authenticator app">
<p>Secret: <code class="secret" id="secret">${enrolment.secret}</code></p>
<form method="post" action="${action('/enrol')}" aria-labelledby="title"${error === null ? '' : html` aria-describedby="form-error"`}>
${error === null ? '' : html`<p class="error" role="alert" id="form-error">${error}</p>`}
<input type="hidden" name="ticket" value="${ticket}">${hidden(destination)}
<label for="code">Code from your authenticator app</label>
<input id="code" name="code" autocomplete="one-time-code" inputmode="numeric" required autofocus>
<button type="submit">Confirm</button>
</form>`,
    })

  /** After an enrolment: the recovery codes, shown this once. */
  const recoveryPage = (destination: Destination, ticket: string, codes: string[]) =>
    signInPage({
      status: 200,
      title: 'Save your recovery codes',
      body: html`<p>Each of these codes signs you in once instead of a code of your app, should you lose it. Keep them somewhere safe: they are not shown again.</p>
<ol class="codes" id="recovery-codes">${codes.map((code) => html`<li><code>${code}</code></li>`)}</ol>
<form method="post" action="${action('/continue')}">
<input type="hidden" name="ticket" value="${ticket}">${hidden(destination)}
<button type="submit">I saved them, continue</button>
</form>`,
    })

  const expired = () => messagePage(400, 'Sign-in expired', EXPIRED, restart)

  /** Where a step sent in a form ends when its form is not what this page sends. */
  const fieldsOf = async <S extends v.GenericSchema>(
    c: Context,
    schema: S,
  ): Promise<{ fields: v.InferOutput<S>; destination: Destination; binding: string } | null> => {
    const binding = bindingOf(c)
    if (binding === null || !BINDING.test(binding)) return null
    const body = await readBody(c.req.raw, deps.maxBodyBytes, ['form'], c.env)
    if (!body.ok) return null
    const parsed = v.safeParse(schema, body.value)
    const destination = destinationOf(body.value)
    return parsed.success && destination !== null
      ? { fields: parsed.output as v.InferOutput<S>, destination, binding }
      : null
  }

  /**
   * The sign-in is complete: the one-time code, for the console of this browser (in the URL's
   * fragment) or for the resource server (at its redirect URI). Where the browser goes next, or why
   * it cannot.
   */
  const handOver = async (
    c: Context,
    person: VerifiedPerson,
    destination: Destination,
    binding: string,
  ): Promise<{ ok: true; location: string } | { ok: false; message: string }> => {
    const { user, method } = person
    const done = await core.signIn.handOver(
      { username: user.username, permissions: user.permissions, fingerprint: '', method },
      destination.authorization === null
        ? { binding, authorization: null }
        : { binding: null, authorization: destination.authorization },
      deps.clientAddress(c),
    )
    // Too many codes waiting, from this address or in all: either way, later.
    if (!done.ok)
      return { ok: false, message: 'Too many sign-ins are waiting to finish. Try again in a minute.' }
    const code = done.value
    if (destination.authorization === null)
      return { ok: true, location: `${destination.returnTo}#${SSO_CODE_FRAGMENT}=${code}` }
    const url = new URL(destination.authorization.redirectUri)
    url.searchParams.set('code', code)
    if (destination.authorization.state !== null)
      url.searchParams.set('state', destination.authorization.state)
    return { ok: true, location: url.href }
  }

  /** A form step that signed the person in: 303 to where the sign-in ends, or a page that says why not. */
  const complete = async (
    c: Context,
    person: VerifiedPerson,
    destination: Destination,
    binding: string,
  ): Promise<Response> => {
    const handed = await handOver(c, person, destination, binding)
    if (!handed.ok) return messagePage(503, 'Too many sign-ins', handed.message, restart)
    return new Response(null, {
      status: 303,
      headers: {
        // A console's cookie stays: the console trades the code with it, and that removes it.
        Location: handed.location,
        'Cache-Control': 'no-store',
        'Referrer-Policy': 'no-referrer',
        'X-Content-Type-Options': 'nosniff',
      },
    })
  }

  /**
   * Shows the page's first step, the browser bound by a cookie (its value kept when it has one, so
   * a sign-in in another tab does not end this one); nothing is stored yet.
   */
  const begin = (c: Context, destination: Destination, notice: Notice | null = null) => {
    const current = bindingOf(c)
    const binding = current !== null && BINDING.test(current) ? current : newBinding()
    const cookie = bindingCookie(binding, COOKIE_SECONDS, basePath, secureBinding(c, deps))
    return passwordPage(200, destination, null, '', { 'Set-Cookie': cookie }, notice)
  }

  const retryHeaders = (error: LoginError | FactorError) =>
    'retryAfter' in error ? { 'Retry-After': String(error.retryAfter) } : undefined

  // The page's forms and its script's calls come from the page itself: a browser that says where a
  // request came from (`Sec-Fetch-Site`) must say this origin, so another site, even a sibling
  // subdomain whose requests carry the SameSite cookie, cannot sign someone in as anybody.
  const CROSS_SITE =
    'This sign-in was sent from another site, so it is refused. Open the sign-in page of this service and sign in there.'
  for (const path of ['/auth/signin', '/auth/signin/*'])
    routes.use(path, async (c, next) => {
      const site = c.req.header('sec-fetch-site')
      if (c.req.method !== 'POST' || site === undefined || site === 'same-origin') return next()
      return c.req.path.startsWith(`${basePath}/auth/signin/passkey`)
        ? answer(403, { code: 'cross_site', message: CROSS_SITE })
        : messagePage(403, 'Sign-in refused', CROSS_SITE, restart)
    })

  routes.get(
    '/auth/signin',
    describe({
      operationId: 'signInPage',
      summary: 'flowadmin’s sign-in page',
      description:
        'Shows the first step of a sign-in for the console with flowadmin’s own users (username and password; the identity provider’s button beside it when one is configured). Then the page asks for the second factor the person has, or for an enrolment when `adminAuth.mfa.require` says they must have one, and sends the browser to `return_to` with a one-time code in the fragment (`#sso_code=…`), which the console trades at `POST /auth/token` (`authorization_code`). Sets an HttpOnly cookie that binds the sign-in to this browser. Without users of its own, the page shows the identity provider’s button alone.',
      tags: ['auth'],
      security: [],
      parameters: [
        {
          name: 'return_to',
          in: 'query',
          required: false,
          description: 'Where the console lands afterwards: a path of this service. Default: the console.',
          schema: { type: 'string' },
          examples: {
            console: { summary: 'The console', value: '/' },
            elsewhere: { summary: 'Another site (400)', value: 'https://evil.example/' },
          },
        },
        {
          name: 'notice',
          in: 'query',
          required: false,
          description: `What the page says above the form, by name: ${Object.keys(NOTICES)
            .map((name) => `\`${name}\``)
            .join(
              ', ',
            )} (the console sends the person here after a log-out or a lost session). Any other value: nothing.`,
          schema: { type: 'string' },
          examples: { console: { summary: 'After a log-out', value: 'logged_out' } },
        },
      ],
      responses: {
        200: { description: 'The page (HTML).', content: HTML },
        400: { description: '`return_to` is not a path of this service (an HTML page).', content: HTML },
      },
    }),
    async (c) => {
      const returnTo = c.req.query('return_to') ?? home
      const problem = returnPathProblem(returnTo, basePath)
      if (problem !== null)
        return messagePage(400, 'Sign-in failed', problem, { href: home, label: 'Back to the console' })
      const notice = noticeOf(c.req.query('notice'))
      return begin(c, { returnTo, authorization: null }, notice)
    },
  )

  routes.get(
    '/auth/authorize',
    describe({
      operationId: 'authorize',
      summary: 'A resource server signs a person in through flowadmin',
      description:
        'OAuth 2.0 authorization endpoint (RFC 6749 §4.1, PKCE S256 required) for resource servers (a Node-RED editor through `@flowadmin/node-red`): ' +
        '`client_id` must be a resource server and `redirect_uri` exactly one of its `redirectUris`, else an HTML page and nothing is sent anywhere. ' +
        'Past that check, every error goes back to `redirect_uri` with `error`, `error_description` and `state` (RFC 6749 §4.1.2.1). ' +
        'The person then signs in on flowadmin’s sign-in page (password, then their second factor; or a passkey), or, when flowadmin has no users of its own, with the identity provider; the browser is then sent to `redirect_uri?code=…&state=…`. The code is traded at `POST /auth/token` (`authorization_code`, HTTP Basic, `redirect_uri`, `code_verifier`).',
      tags: ['auth'],
      security: [],
      parameters: Object.entries(AUTHORIZE_EXAMPLE).map(([name, value]) => ({
        name,
        in: 'query' as const,
        required: name !== 'state',
        schema: { type: 'string' as const },
        examples: { signIn: { summary: 'A Node-RED editor’s sign-in', value } },
      })),
      responses: {
        200: {
          description: 'flowadmin’s sign-in page (HTML), the sign-in bound to this browser by a cookie.',
          content: HTML,
        },
        302: {
          description:
            'To the identity provider (no users of flowadmin’s own); or to the redirect URI with `error` (`unsupported_response_type`, `invalid_request`, or `temporarily_unavailable` when the provider cannot be reached or too many sign-ins are under way), `error_description` and `state`.',
        },
        400: {
          description: 'An unknown client, or a redirect URI not registered for it (an HTML page).',
          content: HTML,
        },
      },
    }),
    async (c) => {
      const clientId = single(c, 'client_id') ?? ''
      const redirectUri = single(c, 'redirect_uri') ?? ''
      if (!core.redirectRegistered(clientId, redirectUri)) {
        const shown = (text: string) => JSON.stringify(text.slice(0, 200))
        return messagePage(
          400,
          'Sign-in refused',
          `The redirect URI ${shown(redirectUri)} is not registered for the client ${shown(clientId)}, so nothing is sent to it. An administrator registers it in adminAuth.resourceServers[].redirectUris (exactly).`,
          { href: home, label: 'Back to the console' },
        )
      }
      const problem = authorizationProblem(c)
      const state = single(c, 'state') ?? null
      if (problem !== null)
        return redirectTo(redirectUri, {
          error: problem.error,
          error_description: problem.description,
          state,
        })
      const authorization: AuthorizationRequest = {
        clientId,
        redirectUri,
        codeChallenge: single(c, 'code_challenge') as string,
        state,
      }
      if (core.signIn.hasUsers() || sso === null) return begin(c, { returnTo: null, authorization })
      const started = await sso.begin(
        deps.ssoRedirectUri ?? `${new URL(c.req.url).origin}${basePath}/auth/strategy/callback`,
        home,
        deps.clientAddress(c),
        authorization,
      )
      if (!started.ok) return ssoRefusal(started.error, home, authorization)
      return toProvider(c, deps, started.value)
    },
  )

  /** What each status of a form step means; each step documents the ones it gives. */
  const STEP_ANSWERS = {
    200: { description: 'The next step’s page (HTML).', content: HTML },
    302: {
      description:
        'To the resource server’s redirect URI with `error` (`temporarily_unavailable`: the provider cannot be reached) and `state`.',
    },
    303: {
      description:
        'Signed in: to the console with `#sso_code=…`, or to the resource server’s redirect URI with `code` and `state`.',
    },
    400: {
      description:
        'No sign-in of this browser now (never begun, used, or past its time), or a form this page does not send (an HTML page); nothing was checked.',
      content: HTML,
    },
    401: {
      description:
        'Wrong username or password, or a wrong, expired or used code: the same step again (an HTML page).',
      content: HTML,
    },
    403: {
      description:
        'Sent from another site (the browser’s `Sec-Fetch-Site` is not `same-origin`): an HTML page; nothing was checked.',
      content: HTML,
    },
    429: {
      description: 'Too many failed attempts (an HTML page, `Retry-After`); nothing was checked.',
      content: HTML,
    },
    503: {
      description:
        'Too many sign-ins are being checked, or waiting to finish, now (an HTML page, `Retry-After`).',
      content: HTML,
    },
  } as const
  const formStep = (
    operationId: string,
    summary: string,
    description: string,
    statuses: ReadonlyArray<keyof typeof STEP_ANSWERS>,
    example: Record<string, string>,
  ) =>
    describe({
      operationId,
      summary,
      description: `${description} A form of the sign-in page (\`application/x-www-form-urlencoded\`), with the cookie \`GET /auth/signin\` or \`GET /auth/authorize\` set; answered with the next page, or with 303 to where the sign-in ends.`,
      tags: ['auth'],
      security: [],
      requestBody: {
        required: true,
        content: {
          'application/x-www-form-urlencoded': {
            schema: schemaOf(
              v.object(Object.fromEntries(Object.keys(example).map((name) => [name, v.string()]))),
            ),
            examples: {
              uncookied: { summary: 'From a browser that began no sign-in (400)', value: example },
            },
          },
        },
      },
      responses: Object.fromEntries(statuses.map((status) => [status, STEP_ANSWERS[status]])),
    })

  routes.post(
    '/auth/signin',
    formStep(
      'signInPassword',
      'Sign in: the password',
      'Checks the username and password as the password grant does (throttled alike).',
      [200, 303, 400, 401, 403, 429, 503],
      { username: 'admin', password: 'flowadmin-demo' },
    ),
    async (c) => {
      const form = await fieldsOf(c, PasswordForm)
      if (form === null) return expired()
      const { fields, destination, binding } = form
      const agent = describeUserAgent(c.req.header('user-agent'))
      const step = await core.signIn.password(
        { ...fields, clientId: destination.authorization?.clientId ?? CONSOLE_CLIENT },
        binding,
        deps.clientAddress(c),
        agent,
      )
      if (!step.ok) {
        const [status, message] = PASSWORD_REFUSAL[step.error.code](step.error)
        return passwordPage(status, destination, message, fields.username, retryHeaders(step.error))
      }
      const next = step.value
      if (next.step === 'verified') return complete(c, next.person, destination, binding)
      if (next.step === 'enrol') return enrolPage(200, destination, next.ticket, next.enrolment, null)
      return codePage(200, destination, next.ticket, null, {
        totp: next.totp,
        passkey: next.passkey && passkeyScript !== undefined,
      })
    },
  )

  routes.post(
    '/auth/signin/code',
    formStep(
      'signInCode',
      'Sign in: the second factor',
      'Checks a code of the person’s authenticator app, or one of their recovery codes (used up), each accepted once; throttled per person.',
      [303, 400, 401, 403, 429, 503],
      { ticket: 'the-ticket-of-the-page', code: '123456' },
    ),
    async (c) => {
      const form = await fieldsOf(c, CodeForm)
      if (form === null) return expired()
      const { fields, destination, binding } = form
      const step = await core.signIn.secondFactor(binding, fields.ticket, fields.code, deps.clientAddress(c))
      if (step.step === 'expired') return expired()
      if (step.step === 'retry') {
        const [status, message] = codeRefusal(step.error)
        return codePage(status, destination, step.ticket, message, undefined, retryHeaders(step.error))
      }
      return complete(c, step.person, destination, binding)
    },
  )

  routes.post(
    '/auth/signin/enrol',
    formStep(
      'signInEnrol',
      'Sign in: set up a second factor',
      'Confirms the new authenticator app with its first code; the next page shows the recovery codes once. A refused code shows a new secret to scan.',
      [200, 400, 401, 403, 429],
      { ticket: 'the-ticket-of-the-page', code: '123456' },
    ),
    async (c) => {
      const form = await fieldsOf(c, CodeForm)
      if (form === null) return expired()
      const { fields, destination, binding } = form
      const step = await core.signIn.enrol(binding, fields.ticket, fields.code, deps.clientAddress(c))
      if (step.step === 'expired') return expired()
      if (step.step === 'retry') {
        const [status, refusal] = codeRefusal(step.error)
        const message =
          status === 401
            ? 'That code was not right. Scan this new code (it replaces the one before) and try again.'
            : `${refusal} Scan this new code (it replaces the one before) first.`
        return enrolPage(status, destination, step.ticket, step.enrolment, message, retryHeaders(step.error))
      }
      return recoveryPage(destination, step.ticket, step.recoveryCodes)
    },
  )

  routes.post(
    '/auth/signin/continue',
    formStep(
      'signInContinue',
      'Sign in: after the recovery codes',
      'Ends a sign-in whose enrolment showed the recovery codes.',
      [303, 400, 403, 503],
      { ticket: 'the-ticket-of-the-page' },
    ),
    async (c) => {
      const form = await fieldsOf(c, TicketForm)
      if (form === null) return expired()
      const { fields, destination, binding } = form
      const step = await core.signIn.finishEnrolment(binding, fields.ticket, deps.clientAddress(c))
      return step.step === 'verified' ? complete(c, step.person, destination, binding) : expired()
    },
  )

  /** A JSON answer of the passkey steps: never stored. */
  const answer = (status: 200 | 400 | 403 | 409 | 429 | 503, body: Record<string, unknown>) =>
    new Response(JSON.stringify(body), {
      status,
      headers: {
        'Content-Type': 'application/json',
        'Cache-Control': 'no-store',
        Pragma: 'no-cache',
        'X-Content-Type-Options': 'nosniff',
      },
    })
  const noSignIn = () => answer(400, { code: 'sign_in_expired', message: EXPIRED })
  const passkeyStep = (
    operationId: string,
    summary: string,
    description: string,
    example: Record<string, unknown>,
    ok: { description: string; schema: v.GenericSchema },
    more: Record<number, object> = {},
  ) =>
    describe({
      operationId,
      summary,
      description: `${description} Called by the sign-in page's script, with the cookie of a sign-in begun in this browser.`,
      tags: ['auth'],
      security: [],
      requestBody: {
        required: true,
        content: json(v.object({}), {
          uncookied: { summary: 'From a browser that began no sign-in (400)', value: example },
        }),
      },
      responses: {
        200: { description: ok.description, headers: NO_STORE_HEADERS, content: json(ok.schema) },
        400: {
          description:
            '`sign_in_expired`: no sign-in of this browser now; `passkey_refused`: the answer did not verify (its challenge unknown, used or expired, its passkey unknown, another origin, a counter that did not grow); `invalid_request`: not JSON.',
          headers: NO_STORE_HEADERS,
          content: adminErrorContent(['sign_in_expired', 'passkey_refused', 'invalid_request']),
        },
        403: {
          description:
            '`cross_site`: sent from another site (the browser’s `Sec-Fetch-Site` is not `same-origin`).',
          headers: NO_STORE_HEADERS,
          content: adminErrorContent(['cross_site']),
        },
        409: {
          description: '`passkeys_not_configured`: no `adminAuth.webauthn` here.',
          headers: NO_STORE_HEADERS,
          content: adminErrorContent(['passkeys_not_configured']),
        },
        ...more,
      },
    })

  routes.post(
    '/auth/signin/passkey/options',
    passkeyStep(
      'signInPasskeyOptions',
      'Sign in with a passkey: the challenge',
      'Options for `navigator.credentials.get()` (no credential listed: the browser offers the person’s passkeys for this site); their challenge serves once, within 5 minutes.',
      {},
      {
        description: 'Options for the browser (PublicKeyCredentialRequestOptionsJSON).',
        schema: v.strictObject({ options: v.record(v.string(), v.unknown()) }),
      },
      {
        429: {
          description:
            '`too_many_sign_ins`: 100 passkey sign-ins of this client address (an IPv6 /64) await their answer (`Retry-After`); nobody else’s is dropped.',
          headers: { ...NO_STORE_HEADERS, 'Retry-After': RETRY_AFTER },
          content: adminErrorContent(['too_many_sign_ins']),
        },
        503: {
          description:
            '`too_many_sign_ins`: 10,000 passkey sign-ins await their answer in all (`Retry-After`).',
          headers: { ...NO_STORE_HEADERS, 'Retry-After': RETRY_AFTER },
          content: adminErrorContent(['too_many_sign_ins']),
        },
      },
    ),
    noStore,
    async (c) => {
      const binding = bindingOf(c)
      if (binding === null || !BINDING.test(binding)) return noSignIn()
      const options = await core.passkeys.signInOptions(deps.clientAddress(c) ?? '')
      if (!options.ok) return toResponse(errorAnswerOf(options.error))
      return answer(200, { options: options.value.options })
    },
  )

  routes.post(
    '/auth/signin/passkey',
    passkeyStep(
      'signInPasskey',
      'Sign in with a passkey',
      'Checks the browser’s answer (signature, origin, relying party, user verification, the passkey’s counter); the person is signed in, as they are now, whatever the policy asks (a passkey is a second factor itself).',
      { response: { id: 'credential-id', type: 'public-key', response: {} } },
      {
        description:
          'Signed in: where the browser goes next (the console with `#sso_code=…`, or the resource server’s redirect URI with `code` and `state`).',
        schema: v.strictObject({ redirect: v.string() }),
      },
      {
        503: {
          description:
            '`too_many_sign_ins`: too many one-time codes wait to be traded; the sign-in did not end.',
          headers: NO_STORE_HEADERS,
          content: adminErrorContent(['too_many_sign_ins']),
        },
      },
    ),
    noStore,
    async (c) => {
      const binding = bindingOf(c)
      if (binding === null || !BINDING.test(binding)) return noSignIn()
      const body = await readBody(c.req.raw, deps.maxBodyBytes, ['json'], c.env)
      if (!body.ok) return toResponse(adminBodyError(body.error))
      const given = body.value.destination
      const destination =
        typeof given === 'object' && given !== null ? destinationOf(given as Record<string, unknown>) : null
      // Checked before the answer, so a sign-in going nowhere spends no challenge.
      if (destination === null) return noSignIn()
      const signedIn = await core.passkeys.signIn(body.value.response, deps.clientAddress(c) ?? '')
      if (!signedIn.ok) return toResponse(errorAnswerOf(signedIn.error))
      const handed = await handOver(c, { user: signedIn.value.user, method: 'passkey' }, destination, binding)
      if (!handed.ok) return answer(503, { code: 'too_many_sign_ins', message: handed.message })
      return answer(200, { redirect: handed.location })
    },
  )

  if (sso !== null)
    routes.post(
      '/auth/signin/provider',
      formStep(
        'signInWithProvider',
        'Sign in with the identity provider instead',
        'The page’s provider button: the sign-in goes on at the identity provider (303 there), for the console or the resource server the page carries.',
        [302, 303, 400, 403, 429, 503],
        {},
      ),
      async (c) => {
        // A sign-in at the provider begins for the same destination as the page's.
        const form = await fieldsOf(c, v.object({}))
        if (form === null) return expired()
        const { destination } = form
        const started = await sso.begin(
          deps.ssoRedirectUri ?? `${new URL(c.req.url).origin}${basePath}/auth/strategy/callback`,
          destination.returnTo ?? home,
          deps.clientAddress(c),
          destination.authorization,
        )
        if (!started.ok) return ssoRefusal(started.error, home, destination.authorization ?? undefined)
        const answer = toProvider(c, deps, started.value)
        return new Response(null, { status: 303, headers: answer.headers })
      },
    )

  return routes
}
