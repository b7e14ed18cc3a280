// The Security view's passkeys, in Chromium with its virtual authenticator, against the built
// server. The passkey routes are answered in the browser as their contract says
// (GET/POST /auth/passkeys, POST /auth/passkeys/options, DELETE /auth/passkeys/:id): they are
// built beside this console, and the end-to-end test with the real routes comes with them.
import { randomBytes } from 'node:crypto'
import type { Page, Route } from 'playwright-core'
import { describe, expect, it } from 'vitest'
import { addAuthenticator, axeFindings, logIn, open, USERS, useBrowserAndServer } from './harness.js'

const env = useBrowserAndServer()

interface Passkey {
  id: string
  name: string
  created_at: string
  last_used_at: string | null
  backed_up: boolean
}

interface Recorded {
  method: string
  path: string
  authorization: string | null
  body: unknown
}

/** The passkey routes as their contract says, over `stored`; every request recorded. */
async function answerPasskeys(page: Page, stored: Passkey[], calls: Recorded[], challenge: string) {
  await page.route(/\/auth\/passkeys(\/.*)?$/, async (route: Route) => {
    const request = route.request()
    const path = new URL(request.url()).pathname
    const body = request.postData() === null ? null : (JSON.parse(request.postData() as string) as unknown)
    calls.push({
      method: request.method(),
      path,
      authorization: await request.headerValue('authorization'),
      body,
    })
    const json = (status: number, value: unknown) =>
      route.fulfill({ status, contentType: 'application/json', body: JSON.stringify(value) })
    if (request.method() === 'GET' && path === '/auth/passkeys') return json(200, { passkeys: stored })
    if (request.method() === 'POST' && path === '/auth/passkeys/options')
      return json(200, {
        options: {
          challenge,
          rp: { id: 'localhost', name: 'flowadmin' },
          user: { id: randomBytes(16).toString('base64url'), name: 'viewer', displayName: 'viewer' },
          pubKeyCredParams: [{ alg: -7, type: 'public-key' }],
          timeout: 60_000,
          attestation: 'none',
          excludeCredentials: [],
          authenticatorSelection: { residentKey: 'required', userVerification: 'required' },
        },
      })
    if (request.method() === 'POST' && path === '/auth/passkeys') {
      const { name, response } = body as { name: string; response: { id: string } }
      const passkey = {
        id: response.id,
        name,
        created_at: new Date().toISOString(),
        last_used_at: null,
        backed_up: false,
      }
      stored.push(passkey)
      return json(201, { passkey })
    }
    const id = /^\/auth\/passkeys\/([^/]+)$/.exec(path)?.[1]
    if (request.method() === 'DELETE' && id !== undefined) {
      const index = stored.findIndex((passkey) => passkey.id === decodeURIComponent(id))
      if (index < 0) return json(404, { code: 'passkey_not_found', message: 'No such passkey' })
      stored.splice(index, 1)
      return route.fulfill({ status: 204 })
    }
    return json(404, { code: 'not_found', message: 'Not found' })
  })
}

/** The console at localhost (a WebAuthn relying party is a host name, not an address). */
async function securityWithAuthenticator() {
  const tab = await open(env.browser, `${env.server.url.replace('127.0.0.1', 'localhost')}/`)
  await addAuthenticator(tab.context, tab.page)
  return tab
}

describe('passkeys in the Security view', () => {
  it('lists, adds (a name, then the browser creates it) and removes after a confirmation', async () => {
    const { page, problems, context } = await securityWithAuthenticator()
    const stored: Passkey[] = []
    const calls: Recorded[] = []
    const challenge = randomBytes(32).toString('base64url')
    await answerPasskeys(page, stored, calls, challenge)
    await logIn(page, 'viewer', USERS.viewer)
    await page.getByRole('button', { name: 'Security' }).click()
    const card = page.getByRole('region', { name: 'Passkeys' })
    await card.getByText('No passkey yet.').waitFor()

    await card.getByLabel('Passkey name').fill('work laptop')
    await card.getByRole('button', { name: 'Add a passkey' }).click()
    await card.getByRole('list', { name: 'Your passkeys' }).getByText('work laptop').waitFor()
    await expect
      .poll(() => card.getByRole('status').textContent())
      .toBe('Passkey work laptop added. Your other sessions have ended.')
    expect(await card.locator('dt:text-is("Last used") + dd').textContent()).toBe('not yet')
    expect(await card.getByLabel('Passkey name').inputValue()).toBe('')

    // What the console sent: the name and the browser's new credential for the server's challenge.
    const added = calls.find((call) => call.method === 'POST' && call.path === '/auth/passkeys')
    expect(added).toBeDefined()
    const { name, response } = (added as Recorded).body as {
      name: string
      response: { id: string; type: string; response: { clientDataJSON: string; attestationObject: string } }
    }
    expect(name).toBe('work laptop')
    expect(response.type).toBe('public-key')
    expect(response.id).toMatch(/^[A-Za-z0-9_-]{16,}$/)
    expect(response.response.attestationObject.length).toBeGreaterThan(0)
    const clientData = JSON.parse(Buffer.from(response.response.clientDataJSON, 'base64url').toString('utf8'))
    expect(clientData).toMatchObject({ type: 'webauthn.create', challenge })
    // Every call carried this tab's session.
    for (const call of calls) expect(call.authorization).toMatch(/^Bearer .+/)
    expect(await axeFindings(page)).toEqual([])

    await card.getByRole('button', { name: 'Remove work laptop' }).click()
    const question = card.getByText('Remove the passkey work laptop? It will no longer sign you in.')
    await question.waitFor()
    await card.getByRole('button', { name: 'Cancel' }).click()
    await expect(question.count()).resolves.toBe(0)
    expect(stored).toHaveLength(1)

    await card.getByRole('button', { name: 'Remove work laptop' }).click()
    await card.getByRole('button', { name: 'Yes, remove' }).click()
    await card.getByText('No passkey yet.').waitFor()
    expect(calls.filter((call) => call.method === 'DELETE').map((call) => call.path)).toEqual([
      `/auth/passkeys/${response.id}`,
    ])
    expect(problems).toEqual([])
    await context.close()
  })

  it('says when the server has passkeys but no settings for them', async () => {
    const { page, context } = await securityWithAuthenticator()
    await page.route(/\/auth\/passkeys$/, (route) =>
      route.fulfill({
        status: 409,
        contentType: 'application/json',
        body: JSON.stringify({ code: 'passkeys_not_configured', message: 'No WebAuthn settings' }),
      }),
    )
    await logIn(page, 'viewer', USERS.viewer)
    await page.getByRole('button', { name: 'Security' }).click()
    await page
      .getByRole('region', { name: 'Passkeys' })
      .getByText(/an administrator must configure them \(adminAuth\.webauthn\)/)
      .waitFor()
    await expect(page.getByRole('button', { name: 'Add a passkey' }).count()).resolves.toBe(0)
    await context.close()
  })
})
