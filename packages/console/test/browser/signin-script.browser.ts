// The sign-in page's script (the built dist/public/signin.js) in Chromium with its virtual
// authenticator holding a passkey: a page shaped as the server's sign-in page, and a server here
// that records what the script sends and answers as the passkey routes' contract says.
import { generateKeyPairSync, randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Browser, Page } from 'playwright-core'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { addAuthenticator, launch } from './harness.js'

const BASE = '/below'
const SCRIPT = new URL('../../dist/public/signin.js', import.meta.url)
/** As the server's sign-in page: no inline script, Trusted Types required. */
const PAGE_CSP =
  "default-src 'none'; script-src 'self'; connect-src 'self'; form-action 'self'; require-trusted-types-for 'script'; trusted-types 'none'"

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign in</title>
<script type="module" src="${BASE}/signin.js"></script></head>
<body><main>
<form method="post" action="${BASE}/auth/signin/password">
  <label>Username <input name="username"></label>
  <button type="button" id="passkey-signin" data-base="${BASE}" data-destination="{&#34;return_to&#34;:&#34;/&#34;}" hidden>Sign in with a passkey</button>
</form>
<form method="post" action="${BASE}/auth/signin/code">
  <label>Code <input name="code"></label>
  <button id="passkey-second" data-base="${BASE}" data-destination="{&#34;return_to&#34;:&#34;/&#34;}" hidden>Use a passkey instead</button>
</form>
<p id="passkey-error" role="alert" hidden></p>
</main></body></html>`

interface Call {
  path: string
  contentType: string | undefined
  body: unknown
}

/** What the next answers are: the options route's and the sign-in route's. */
let answers: { options: [number, unknown]; signIn: [number, unknown] }
const calls: Call[] = []
const challenge = randomBytes(32).toString('base64url')

async function handle(request: IncomingMessage, response: ServerResponse) {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  const path = request.url ?? ''
  const send = (
    status: number,
    type: string,
    body: string | Buffer,
    headers: Record<string, string> = {},
  ) => {
    response.writeHead(status, { 'content-type': type, ...headers })
    response.end(body)
  }
  if (request.method === 'GET' && path === `${BASE}/signin`)
    return send(200, 'text/html; charset=utf-8', PAGE, { 'content-security-policy': PAGE_CSP })
  if (request.method === 'GET' && path === `${BASE}/signin.js`)
    return send(200, 'text/javascript; charset=utf-8', await readFile(SCRIPT))
  if (request.method === 'GET' && path === `${BASE}/signed-in`)
    return send(200, 'text/html; charset=utf-8', '<!doctype html><title>Signed in</title><p>Signed in</p>')
  if (request.method === 'POST' && path.startsWith(`${BASE}/auth/signin/passkey`)) {
    const text = Buffer.concat(chunks).toString('utf8')
    calls.push({ path, contentType: request.headers['content-type'], body: JSON.parse(text) })
    const [status, body] = path.endsWith('/options') ? answers.options : answers.signIn
    return send(status, 'application/json', JSON.stringify(body))
  }
  send(404, 'text/plain', '')
}

let server: Server
let browser: Browser
let origin: string

beforeAll(async () => {
  server = createServer((request, response) => void handle(request, response))
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  // localhost, not an address: a WebAuthn relying party is a host name.
  origin = `http://localhost:${(server.address() as AddressInfo).port}`
  browser = await launch()
})
afterAll(async () => {
  await browser?.close()
  await new Promise((resolve) => server?.close(resolve))
})
beforeEach(() => {
  calls.length = 0
  answers = {
    options: [
      200,
      { options: { challenge, rpId: 'localhost', timeout: 60_000, userVerification: 'preferred' } },
    ],
    signIn: [200, { redirect: `${BASE}/signed-in` }],
  }
})

const credentialId = randomBytes(16)

/** A tab whose browser has a platform authenticator holding one passkey for localhost. */
async function tab(): Promise<{ page: Page; problems: string[]; close: () => Promise<void> }> {
  const context = await browser.newContext()
  const page = await context.newPage()
  const problems: string[] = []
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
  page.on('console', (message) => {
    if (/Content Security Policy|Trusted Type|Refused to/i.test(message.text())) problems.push(message.text())
  })
  const { cdp, authenticatorId } = await addAuthenticator(context, page)
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
  await cdp.send('WebAuthn.addCredential', {
    authenticatorId,
    credential: {
      credentialId: credentialId.toString('base64'),
      isResidentCredential: true,
      rpId: 'localhost',
      privateKey: privateKey.export({ format: 'der', type: 'pkcs8' }).toString('base64'),
      userHandle: Buffer.from('user-handle').toString('base64'),
      signCount: 0,
    },
  })
  await page.goto(`${origin}${BASE}/signin`)
  return { page, problems, close: () => context.close() }
}

describe("the sign-in page's script", () => {
  for (const id of ['passkey-signin', 'passkey-second']) {
    it(`#${id}: shown, then signs in with the passkey and follows the redirect`, async () => {
      const { page, problems, close } = await tab()
      const button = page.locator(`#${id}`)
      await expect.poll(() => button.isVisible()).toBe(true)
      await button.click()
      await page.waitForURL(`${origin}${BASE}/signed-in`)

      expect(calls.map((call) => [call.path, call.contentType])).toEqual([
        [`${BASE}/auth/signin/passkey/options`, 'application/json'],
        [`${BASE}/auth/signin/passkey`, 'application/json'],
      ])
      expect(calls[0]?.body).toEqual({})
      const { response, destination } = (calls[1] as Call).body as {
        response: { id: string; type: string; response: { clientDataJSON: string; signature: string } }
        destination: unknown
      }
      // Where the sign-in ends, as the page's button carries it.
      expect(destination).toEqual({ return_to: '/' })
      // The authenticator's assertion for this page's challenge, as @simplewebauthn/server reads it.
      expect(response.id).toBe(credentialId.toString('base64url'))
      expect(response.type).toBe('public-key')
      const clientData = JSON.parse(
        Buffer.from(response.response.clientDataJSON, 'base64url').toString('utf8'),
      )
      expect(clientData).toMatchObject({ type: 'webauthn.get', challenge, origin })
      expect(response.response.signature.length).toBeGreaterThan(0)
      expect(problems).toEqual([])
      await close()
    })
  }

  it("shows the server's refusal of the options, and keeps the page", async () => {
    answers.options = [409, { code: 'passkeys_not_configured', message: 'Passkeys are not configured here' }]
    const { page, problems, close } = await tab()
    await page.locator('#passkey-signin').click()
    const alert = page.getByRole('alert')
    await expect.poll(() => alert.textContent()).toBe('Passkeys are not configured here')
    expect(await alert.isVisible()).toBe(true)
    expect(calls).toHaveLength(1)
    expect(page.url()).toBe(`${origin}${BASE}/signin`)
    // The button works again: a second try asks again.
    await expect.poll(() => page.locator('#passkey-signin').isEnabled()).toBe(true)
    expect(problems).toEqual([])
    await close()
  })

  it("shows the server's refusal of the passkey, and a second try can succeed", async () => {
    answers.signIn = [401, { code: 'passkey_refused', message: 'This passkey does not sign anyone in here' }]
    const { page, problems, close } = await tab()
    await page.locator('#passkey-second').click()
    await expect
      .poll(() => page.getByRole('alert').textContent())
      .toBe('This passkey does not sign anyone in here')
    expect(page.url()).toBe(`${origin}${BASE}/signin`)

    answers.signIn = [200, { redirect: `${BASE}/signed-in` }]
    await page.locator('#passkey-second').click()
    await page.waitForURL(`${origin}${BASE}/signed-in`)
    expect(calls).toHaveLength(4)
    expect(problems).toEqual([])
    await close()
  })
})
