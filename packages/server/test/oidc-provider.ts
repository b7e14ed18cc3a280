// A real OpenID provider (panva's oidc-provider) on 127.0.0.1 for the single sign-on tests: people
// in groups, its development login pages driven over HTTP with a cookie jar, back-channel logout,
// and key rotation (a new provider with new keys behind the same address).
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, type JWK } from 'jose'
import Provider from 'oidc-provider'

export const CLIENT_ID = 'flowadmin'
export const CLIENT_SECRET = 'the-secret-of-flowadmin-at-the-provider'

/** A person at the provider: their login (account id, also their `sub`), name and groups. */
export interface Person {
  username: string
  groups: string[]
}

/** A signing key as the provider publishes it. */
export async function signingKey(kid: string): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  return { ...(await exportJWK(privateKey)), kid, alg: 'RS256', use: 'sig' }
}

export interface TestProvider {
  issuer: string
  people: Map<string, Person>
  /** Registers flowadmin at the provider: its redirect URIs and back-channel logout URI. */
  register(client: { redirectUris: string[]; backchannelLogoutUri: string }): Promise<void>
  /** Starts signing with a new key (a new provider instance with the same issuer and people). */
  rotateKeys(): Promise<void>
  /** The provider sends flowadmin a logout token for this person's session. */
  backchannelLogout(sub: string, sid: string): Promise<void>
  /** The provider's session id of the latest sign-in of `sub`. */
  sessionOf(sub: string): string | undefined
  /** Stops answering (connections refused) until started again. */
  stop(): Promise<void>
  close(): Promise<void>
}

/** Listens on 127.0.0.1 first, so flowadmin can be given the issuer before the client is registered. */
export async function startProvider(): Promise<TestProvider> {
  const people = new Map<string, Person>()
  const sessions = new Map<string, string>()
  let provider: Provider | null = null
  let handler: ReturnType<Provider['callback']> | null = null
  let client: { redirectUris: string[]; backchannelLogoutUri: string } | null = null
  let keys: JWK[] = []
  const server: Server = createServer((req, res) => {
    if (handler === null) {
      res.statusCode = 503
      res.end()
      return
    }
    handler(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const issuer = `http://127.0.0.1:${port}`

  function build(): void {
    if (client === null) throw new Error('register the client first')
    const next = new Provider(issuer, {
      clients: [
        {
          client_id: CLIENT_ID,
          client_secret: CLIENT_SECRET,
          redirect_uris: client.redirectUris,
          response_types: ['code'],
          grant_types: ['authorization_code'],
          token_endpoint_auth_method: 'client_secret_basic',
          backchannel_logout_uri: client.backchannelLogoutUri,
          backchannel_logout_session_required: true,
        },
      ],
      claims: { openid: ['sub'], profile: ['preferred_username'], groups: ['groups'] },
      async findAccount(_ctx, id) {
        const person = people.get(id)
        if (person === undefined) return undefined
        return {
          accountId: id,
          async claims() {
            return { sub: id, preferred_username: person.username, groups: [...person.groups] }
          },
        }
      },
      features: { devInteractions: { enabled: true }, backchannelLogout: { enabled: true } },
      jwks: { keys },
      // The provider's guard against requests to special-use addresses would refuse flowadmin on
      // 127.0.0.1 (back-channel logout): the test's network is all loopback.
      fetch: (url, options) => {
        const { dispatcher: _, ...rest } = (options ?? {}) as RequestInit & { dispatcher?: unknown }
        return globalThis.fetch(url, rest)
      },
      cookies: { keys: ['a-cookie-key-for-the-test-provider'] },
      async renderError(ctx, out) {
        ctx.type = 'text/plain'
        ctx.body = `${out.error}: ${out.error_description ?? ''}`
      },
    })
    // The session id of each sign-in, for the logout tests.
    next.on('grant.success', (ctx) => {
      const code = ctx.oidc.entities.AuthorizationCode
      if (code?.sid !== undefined && code.accountId !== undefined) sessions.set(code.accountId, code.sid)
    })
    provider = next
    handler = next.callback()
  }

  return {
    issuer,
    people,
    async register(registered) {
      client = registered
      keys = [await signingKey('key-1')]
      build()
    },
    async rotateKeys() {
      keys = [await signingKey(`key-${Date.now()}`)]
      build()
    },
    async backchannelLogout(sub, sid) {
      if (provider === null) throw new Error('no provider')
      const registered = await provider.Client.find(CLIENT_ID)
      if (registered === undefined) throw new Error('no client')
      await (
        registered as unknown as { backchannelLogout(sub: string, sid: string): Promise<void> }
      ).backchannelLogout(sub, sid)
    },
    sessionOf: (sub) => sessions.get(sub),
    async stop() {
      await new Promise<void>((resolve) => server.close(() => resolve()))
      server.closeAllConnections()
    },
    async close() {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    },
  }
}

/** Cookies per origin (host and port), as much of a browser as the login pages need. */
export function createCookieJar() {
  const jars = new Map<string, Map<string, string>>()
  return {
    header(url: string): string {
      const jar = jars.get(new URL(url).host)
      return jar === undefined ? '' : [...jar].map(([name, value]) => `${name}=${value}`).join('; ')
    },
    store(url: string, res: Response): void {
      const host = new URL(url).host
      const jar = jars.get(host) ?? new Map<string, string>()
      jars.set(host, jar)
      for (const line of res.headers.getSetCookie()) {
        const [pair = '', ...attributes] = line.split(';')
        const at = pair.indexOf('=')
        const name = pair.slice(0, at).trim()
        const value = pair.slice(at + 1).trim()
        const expired = attributes.some((attribute) => /^\s*max-age=0\s*$/i.test(attribute))
        if (expired || value === '') jar.delete(name)
        else jar.set(name, value)
      }
    },
    get(url: string, name: string): string | undefined {
      return jars.get(new URL(url).host)?.get(name)
    },
  }
}
export type CookieJar = ReturnType<typeof createCookieJar>

/** One request with the jar's cookies, redirects not followed; the jar keeps what it sets. */
export async function browse(jar: CookieJar, url: string, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers)
  const cookie = jar.header(url)
  if (cookie !== '') headers.set('Cookie', cookie)
  const res = await fetch(url, { ...init, headers, redirect: 'manual' })
  jar.store(url, res)
  return res
}

/**
 * Walks the provider's development login and consent pages from `start` (flowadmin's
 * /auth/strategy) until a response that is not a redirect and has no form to fill, or a redirect
 * to a URL `stop` accepts. Returns every URL visited, the last response and the URL it ended on.
 */
export async function walkSignIn(
  jar: CookieJar,
  start: string,
  login: string,
  stop: (url: string) => boolean,
): Promise<{ visited: string[]; res: Response; url: string }> {
  const visited: string[] = []
  let url = start
  let init: RequestInit = {}
  for (let step = 0; step < 20; step++) {
    visited.push(url)
    const res = await browse(jar, url, init)
    init = {}
    const location = res.headers.get('location')
    if (location !== null && res.status >= 300 && res.status < 400) {
      const next = new URL(location, url).href
      if (stop(next)) return { visited, res, url: next }
      url = next
      continue
    }
    {
      const html = await res.text()
      const action = /<form[^>]*action="([^"]+)"/.exec(html)?.[1]
      const prompt = /name="prompt" value="([^"]+)"/.exec(html)?.[1]
      if (action === undefined || prompt === undefined) return { visited, res: new Response(html, res), url }
      const body = new URLSearchParams({ prompt })
      if (prompt === 'login') {
        body.set('login', login)
        body.set('password', 'any')
      }
      url = new URL(action, url).href
      init = { method: 'POST', body, headers: { 'Content-Type': 'application/x-www-form-urlencoded' } }
    }
  }
  throw new Error(`the sign-in did not end: ${visited.join(' → ')}`)
}

/**
 * Presses the identity provider's button on flowadmin's sign-in page (`html`, served at `pageUrl`),
 * as a browser posts its form: the page's hidden fields carry the sign-in's request. The response
 * (a redirect to the provider).
 */
export async function pressProviderButton(jar: CookieJar, pageUrl: string, html: string): Promise<Response> {
  const form = /<form method="post" action="([^"]+\/provider)">([\s\S]*?)<\/form>/.exec(html)
  if (form === null) throw new Error('the sign-in page shows no provider button')
  // The page escapes every character HTML gives a meaning to as a numeric reference.
  const text = (value = '') => value.replace(/&#(\d+);/g, (_all, code) => String.fromCharCode(Number(code)))
  const fields = new URLSearchParams()
  for (const [, name, value] of (form[2] ?? '').matchAll(
    /<input type="hidden" name="([^"]+)" value="([^"]*)">/g,
  ))
    fields.set(text(name), text(value))
  return browse(jar, new URL(text(form[1]), pageUrl).href, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: fields,
  })
}
