// Node-RED editors sign in through flowadmin with the organisation's identity provider: a real
// Node-RED 4.1 with the helper in SSO mode, the built flowadmin and oidc-provider on 127.0.0.1,
// walked over HTTP with a cookie jar as a browser would (the browser test clicks the same way).
// flowadmin is the authorization server of that hop: registered redirect URIs only, PKCE, a
// one-time code for the resource server that asked; what the editor holds dies with the person.
import { createHash, randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import * as path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deploy, FLEET, LABEL, type NodeRedSso, startNodeRedSso } from './node-red-sso.js'
import { browse, createCookieJar, walkSignIn } from './oidc-provider.js'

let env: NodeRedSso

beforeAll(async () => {
  env = await startNodeRedSso()
})
afterAll(async () => {
  await env?.stop()
})

/**
 * The editor's button (Node-RED's /auth/strategy) through flowadmin and the provider's pages, back
 * to the editor: Node-RED's last redirect is `/?access_token=…`, or `/?session_message=…`.
 */
async function signIn(login: string) {
  const jar = createCookieJar()
  const walked = await walkSignIn(jar, `${env.nodeRed.url}/auth/strategy`, login, (url) =>
    url.startsWith(`${env.nodeRed.url}/?`),
  )
  const back = new URL(walked.url)
  return {
    ...walked,
    token: back.searchParams.get('access_token'),
    message: back.searchParams.get('session_message'),
  }
}

/** A sign-in that must succeed: the token the editor got. */
async function tokenOf(login: string): Promise<string> {
  const { token, visited, message } = await signIn(login)
  if (token === null) throw new Error(`${login} was not signed in (${message}): ${visited.join(' → ')}`)
  return token
}

const get = (url: string, token: string) => fetch(url, { headers: { Authorization: `Bearer ${token}` } })

/** flowadmin's answer about a token, asked as the fleet (or another resource server). */
async function introspect(token: string, authorization = env.basic): Promise<Record<string, unknown>> {
  const res = await fetch(`${env.flowadmin.url}/auth/introspect`, {
    method: 'POST',
    headers: { Authorization: authorization, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token }),
  })
  return (await res.json()) as Record<string, unknown>
}

/** PKCE S256: a verifier and its challenge. */
function pkce() {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

/** flowadmin's /auth/authorize as a resource server would send a browser there. */
function authorizeUrl(params: Record<string, string>): string {
  const { challenge } = pkce()
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: FLEET,
    redirect_uri: env.redirectUri,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'the-state',
    ...params,
  })
  return `${env.flowadmin.url}/auth/authorize?${query}`
}

/** Through flowadmin and the provider to the fleet's redirect URI: the code, not yet traded. */
async function codeFor(login: string, challenge: string) {
  const jar = createCookieJar()
  const walked = await walkSignIn(jar, authorizeUrl({ code_challenge: challenge }), login, (url) =>
    url.startsWith(env.redirectUri),
  )
  const back = new URL(walked.url)
  return { code: back.searchParams.get('code') ?? '', state: back.searchParams.get('state') }
}

/** The fleet trades a code at POST /auth/token. */
function redeem(fields: Record<string, string>, authorization = env.basic) {
  return fetch(`${env.flowadmin.url}/auth/token`, {
    method: 'POST',
    headers: { Authorization: authorization, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', redirect_uri: env.redirectUri, ...fields }),
  })
}

describe('the editor’s “Sign in with …” goes through flowadmin and the provider', () => {
  it('Node-RED shows the button', async () => {
    const res = await fetch(`${env.nodeRed.url}/auth/login`)
    expect(await res.json()).toEqual({
      type: 'strategy',
      prompts: [{ type: 'button', label: LABEL, url: 'auth/strategy' }],
    })
  })

  it('an admin comes back signed in with a flowadmin token, and deploys', async () => {
    const { token, visited } = await signIn('ada-sub')
    // The button, flowadmin's authorization endpoint, the provider, flowadmin's callback, Node-RED's.
    expect(visited[0]).toBe(`${env.nodeRed.url}/auth/strategy`)
    expect(visited[1]).toMatch(new RegExp(`^${env.flowadmin.url}/auth/authorize\\?`))
    expect(visited.some((url) => url.startsWith(env.provider.issuer))).toBe(true)
    expect(visited.some((url) => url.startsWith(`${env.flowadmin.url}/auth/strategy/callback?`))).toBe(true)
    expect(visited.some((url) => url.startsWith(`${env.redirectUri}?code=`))).toBe(true)
    expect(token).toMatch(/^[A-Za-z0-9_-]{40,}$/)

    const settings = await get(`${env.nodeRed.url}/settings`, token as string)
    expect(settings.status).toBe(200)
    expect(((await settings.json()) as { user: unknown }).user).toEqual({ username: 'ada', permissions: '*' })
    const deployed = await deploy(env.nodeRed.url, token as string)
    expect(deployed.status).toBe(200)

    // The token is flowadmin's, issued to the fleet; Node-RED kept no session of its own.
    expect(await introspect(token as string)).toMatchObject({
      active: true,
      username: 'ada',
      scope: '*',
      client_id: FLEET,
      aud: FLEET,
    })
    // It is the fleet's alone: flowadmin's own API refuses it as unknown, and another resource
    // server learns nothing of it.
    for (const route of ['/settings', '/auth/tokens?user=*', '/nodes']) {
      const res = await get(`${env.flowadmin.url}${route}`, token as string)
      expect([route, res.status, res.headers.get('www-authenticate')]).toEqual([
        route,
        401,
        'Bearer realm="flowadmin", error="invalid_token"',
      ])
    }
    expect(await introspect(token as string, env.otherBasic)).toEqual({ active: false })
    // flowadmin audited the sign-in, with the resource server as the client.
    await expect
      .poll(() =>
        env.flowadmin.run.stdout
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as Record<string, unknown>)
          .filter((event) => event.event === 'sso.succeeded' && event.user === 'ada'),
      )
      .toEqual([expect.objectContaining({ client: FLEET, permissions: ['*'] })])
    const sessions = await readFile(path.join(env.nodeRed.userDir, '.sessions.json'), 'utf8').catch(
      () => '{}',
    )
    expect(Object.keys(JSON.parse(sessions) as object)).toEqual([])
  })

  it('a viewer comes back signed in with read only: their deploy is refused', async () => {
    const token = await tokenOf('vic-sub')
    const settings = await get(`${env.nodeRed.url}/settings`, token)
    expect(((await settings.json()) as { user: unknown }).user).toEqual({
      username: 'vic',
      permissions: 'read',
    })
    expect((await get(`${env.nodeRed.url}/flows`, token)).status).toBe(200)
    expect((await deploy(env.nodeRed.url, token)).status).toBe(401)
  })

  it('the editor’s logout ends the token at flowadmin too', async () => {
    const token = await tokenOf('ada-sub')
    const res = await fetch(`${env.nodeRed.url}/auth/revoke`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
      body: JSON.stringify({ token }),
    })
    expect(res.status).toBe(200)
    await expect.poll(async () => (await introspect(token)).active).toBe(false)
    expect((await get(`${env.nodeRed.url}/settings`, token)).status).toBe(401)
  })

  it('back-channel logout at the provider ends the editor’s session: its next request is refused', async () => {
    const token = await tokenOf('leo-sub')
    expect((await deploy(env.nodeRed.url, token)).status).toBe(200)
    await env.provider.backchannelLogout('leo-sub', env.provider.sessionOf('leo-sub') as string)
    expect((await deploy(env.nodeRed.url, token)).status).toBe(401)
    expect((await get(`${env.nodeRed.url}/settings`, token)).status).toBe(401)
  })

  it('a person moved to a viewer group at the provider: their next sign-in narrows the editor they hold', async () => {
    const before = await tokenOf('dee-sub')
    expect((await deploy(env.nodeRed.url, before)).status).toBe(200)
    env.provider.people.set('dee-sub', { username: 'dee', groups: ['nr-viewers'] })
    const after = await tokenOf('dee-sub')
    for (const token of [before, after]) {
      expect((await deploy(env.nodeRed.url, token)).status).toBe(401)
      expect((await get(`${env.nodeRed.url}/flows`, token)).status).toBe(200)
    }
  })

  it('a person whose groups give nothing is sent back to the editor with the refusal (RFC 6749 §4.1.2.1), no token', async () => {
    const { token, message, visited } = await signIn('mal-sub')
    expect(token).toBeNull()
    // flowadmin answers the editor at its redirect URI with the error and the editor's state.
    const callback = new URL(visited.at(-1) ?? '')
    expect(`${callback.origin}${callback.pathname}`).toBe(env.redirectUri)
    expect(callback.searchParams.get('error')).toBe('access_denied')
    expect(callback.searchParams.get('code')).toBeNull()
    expect(callback.searchParams.get('state')).toBe(new URL(visited[1] ?? '').searchParams.get('state'))
    // The editor's login page says why.
    expect(message).toBe(
      'Error: flowadmin refused the sign-in: Signed in as mal, but your groups (marketing) give no permission here. Ask an administrator to add you to a group that does.',
    )
  })

  it('a person removed at the provider cannot sign in again: stopped there, never back at the editor', async () => {
    expect(await tokenOf('vic-sub')).not.toBe('')
    const vic = env.provider.people.get('vic-sub')
    env.provider.people.delete('vic-sub')
    try {
      const { token, url, res } = await signIn('vic-sub')
      expect(token).toBeNull()
      // The provider has no such account any more: its error page, and no code for anyone.
      expect(url.startsWith(env.provider.issuer)).toBe(true)
      expect(res.status).toBeGreaterThanOrEqual(400)
    } finally {
      if (vic !== undefined) env.provider.people.set('vic-sub', vic)
    }
  })
})

describe('flowadmin as the authorization server of that hop', () => {
  it('refuses a redirect URI that is not registered, exactly: 400 page, nothing sent anywhere', async () => {
    for (const redirect of [
      'http://127.0.0.1:1/auth/strategy/callback',
      `${env.redirectUri}/`,
      `${env.redirectUri}?next=1`,
      env.redirectUri.toUpperCase(),
    ]) {
      const jar = createCookieJar()
      const res = await browse(jar, authorizeUrl({ redirect_uri: redirect }))
      expect(res.status).toBe(400)
      expect(res.headers.get('location')).toBeNull()
      expect(res.headers.get('set-cookie')).toBeNull()
      expect(await res.text()).toContain('is not registered for the client')
    }
    const unknown = await fetch(authorizeUrl({ client_id: 'someone-else' }), { redirect: 'manual' })
    expect(unknown.status).toBe(400)
  })

  it('requires PKCE S256: without it the client is told at its redirect URI', async () => {
    const res = await fetch(authorizeUrl({ code_challenge_method: 'plain' }), { redirect: 'manual' })
    expect(res.status).toBe(302)
    const back = new URL(res.headers.get('location') ?? '')
    expect(`${back.origin}${back.pathname}`).toBe(env.redirectUri)
    expect(back.searchParams.get('error')).toBe('invalid_request')
    expect(back.searchParams.get('state')).toBe('the-state')
  })

  it('trades a code once, for the client it was issued to, with its redirect URI and verifier', async () => {
    const { verifier, challenge } = pkce()
    const { code, state } = await codeFor('ada-sub', challenge)
    expect(state).toBe('the-state')
    // Without the fleet's credentials it is the console's grant, which knows no such code.
    const anonymous = await redeem({ code, code_verifier: verifier }, '')
    expect(anonymous.status).toBe(400)
    const wrongSecret = await redeem(
      { code, code_verifier: verifier },
      `Basic ${Buffer.from(`${FLEET}:wrong`).toString('base64')}`,
    )
    expect(wrongSecret.status).toBe(401)
    expect(await wrongSecret.json()).toMatchObject({ error: 'invalid_client' })

    const ok = await redeem({ code, code_verifier: verifier })
    expect(ok.status).toBe(200)
    const { access_token } = (await ok.json()) as { access_token: string }
    expect(await introspect(access_token)).toMatchObject({ active: true, username: 'ada', client_id: FLEET })
    const again = await redeem({ code, code_verifier: verifier })
    expect(again.status).toBe(400)
    expect(await again.json()).toMatchObject({ error: 'invalid_grant' })
  })

  it('refuses a wrong verifier or redirect URI, and the code is spent', async () => {
    const wrongs: Array<Record<string, string>> = [
      { code_verifier: pkce().verifier },
      { redirect_uri: `${env.redirectUri}/` },
    ]
    for (const wrong of wrongs) {
      const { verifier, challenge } = pkce()
      const { code } = await codeFor('ada-sub', challenge)
      const refused = await redeem({ code, code_verifier: verifier, ...wrong })
      expect(refused.status).toBe(400)
      expect(await refused.json()).toMatchObject({ error: 'invalid_grant' })
      expect((await redeem({ code, code_verifier: verifier })).status).toBe(400)
    }
  })
})
