// The relying party as the server runs it (@simplewebauthn/server over adminAuth.webauthn), with a
// software authenticator: passkeys registered over HTTP and signed in with through the core.
import { createHttpApp } from '@flowadmin/adapter-http'
import { createMemoryStores } from '@flowadmin/adapter-memory'
import { createCore } from '@flowadmin/core'
import {
  createEventRecorder,
  createFakeLoader,
  createFakeTypeUsage,
  createPlainHasher,
} from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'
import { createWebAuthn } from '../src/adapters/webauthn.js'
import { createSoftwareAuthenticator, UP } from './software-authenticator.js'

const ORIGIN = 'https://admin.example.com'
const SETTINGS = { rpId: 'example.com', rpName: 'Plant 4', origins: [ORIGIN, 'https://example.com:8443'] }
const ADDRESS = '192.0.2.10'
/** The sign-in page's cookie of the browser signing in. */
const BROWSER = 'the-browser-binding-of-this-test-43-characte'

async function world() {
  const hasher = createPlainHasher()
  const events = createEventRecorder()
  const stores = createMemoryStores()
  const core = createCore(
    {
      stores,
      verifier: hasher,
      loader: createFakeLoader(),
      typeUsage: createFakeTypeUsage(),
      events,
      webauthn: createWebAuthn(SETTINGS),
    },
    { adminAuth: { users: [{ username: 'alice', password: hasher.hash('pw'), permissions: 'read' }] } },
  )
  const app = createHttpApp(core, { version: '1.0.0', clientAddress: () => ADDRESS })
  const issued = await core.login(
    { grantType: 'password', clientId: 'service-admin', username: 'alice', password: 'pw', scope: 'read' },
    ADDRESS,
  )
  if (!issued.ok) throw new Error(issued.error.code)
  const auth = { Authorization: `Bearer ${issued.value.accessToken}` }
  const authenticator = createSoftwareAuthenticator()
  /** Registration options over HTTP. */
  const options = async () => {
    const res = await app.request('/auth/passkeys/options', { method: 'POST', headers: auth })
    expect(res.status).toBe(200)
    return ((await res.json()) as { options: { challenge: string; rp: { id: string; name: string } } })
      .options
  }
  const register = (name: string, response: unknown) =>
    app.request('/auth/passkeys', {
      method: 'POST',
      headers: { ...auth, 'Content-Type': 'application/json' },
      body: JSON.stringify({ name, response }),
    })
  /** A registered passkey's id. */
  const registered = async () => {
    const res = await register('Laptop', authenticator.create(await options(), { origin: ORIGIN }))
    expect(res.status).toBe(201)
    return ((await res.json()) as { passkey: { id: string } }).passkey.id
  }
  const signInOptions = async () => {
    const made = await core.passkeys.signInOptions(BROWSER, ADDRESS)
    if (!made.ok) throw new Error(made.error.code)
    return made.value.options as { challenge: string; rpId: string; allowCredentials?: unknown[] }
  }
  return { core, app, auth, events, authenticator, options, register, registered, signInOptions }
}

describe('passkeys with the real relying party', () => {
  it('makes options for a discoverable passkey of the configured relying party', async () => {
    const { options, registered } = await world()
    const made = (await options()) as unknown as Record<string, unknown>
    expect(made).toMatchObject({
      rp: { id: 'example.com', name: 'Plant 4' },
      user: { name: 'alice', displayName: 'alice' },
      attestation: 'none',
      excludeCredentials: [],
      authenticatorSelection: {
        residentKey: 'required',
        requireResidentKey: true,
        userVerification: 'required',
      },
    })
    const id = await registered()
    expect(await options()).toMatchObject({
      excludeCredentials: [{ id, type: 'public-key', transports: ['internal'] }],
    })
  })

  it('registers a passkey over HTTP, and signs in with it once per challenge, its counter growing', async () => {
    const { core, app, auth, events, authenticator, registered, signInOptions } = await world()
    const id = await registered()
    const listed = await app.request('/auth/passkeys', { headers: auth })
    expect(await listed.json()).toEqual({
      passkeys: [
        { id, name: 'Laptop', created_at: expect.any(String), last_used_at: null, backed_up: false },
      ],
    })
    const options = await signInOptions()
    expect(options).toMatchObject({ rpId: 'example.com', userVerification: 'required' })
    expect(options.allowCredentials ?? []).toEqual([])
    const answer = authenticator.get(id, options, { origin: ORIGIN })
    const signedIn = await core.passkeys.signIn(answer, BROWSER, ADDRESS)
    expect(signedIn.ok && signedIn.value.user.username).toBe('alice')
    // Replayed: its challenge was spent.
    expect(await core.passkeys.signIn(answer, BROWSER, ADDRESS)).toEqual({
      ok: false,
      error: { code: 'passkey_refused' },
    })
    // From the other configured origin, a new challenge: signs in again.
    const again = authenticator.get(id, await signInOptions(), { origin: 'https://example.com:8443' })
    expect((await core.passkeys.signIn(again, BROWSER, ADDRESS)).ok).toBe(true)
    // A clone: a valid signature over a counter that did not grow.
    const clone = authenticator.get(id, await signInOptions(), { origin: ORIGIN, counter: 2 })
    expect(await core.passkeys.signIn(clone, BROWSER, ADDRESS)).toEqual({
      ok: false,
      error: { code: 'passkey_refused' },
    })
    expect(events.ofType('passkey.failed').map((event) => event.reason)).toEqual([
      'unknown_challenge',
      'counter',
    ])
    expect(events.ofType('passkey.succeeded')).toHaveLength(2)
  })

  it('accepts passkeys that keep no counter, reporting 0 each time', async () => {
    const { core, app, auth, options, register, signInOptions } = await world()
    const synced = createSoftwareAuthenticator({ counting: false })
    const res = await register('Phone', synced.create(await options(), { origin: ORIGIN }))
    expect(res.status).toBe(201)
    const { id } = ((await res.json()) as { passkey: { id: string } }).passkey
    for (let i = 0; i < 2; i++)
      expect(
        (
          await core.passkeys.signIn(
            synced.get(id, await signInOptions(), { origin: ORIGIN }),
            BROWSER,
            ADDRESS,
          )
        ).ok,
      ).toBe(true)
    const listed = (await (await app.request('/auth/passkeys', { headers: auth })).json()) as {
      passkeys: Array<{ last_used_at: string | null }>
    }
    expect(listed.passkeys[0]?.last_used_at).not.toBeNull()
  })

  it('refuses registrations from another origin or relying party, or without user verification', async () => {
    const { app, auth, authenticator, options, register } = await world()
    for (const ceremony of [
      { origin: 'https://evil.example' },
      { origin: 'https://admin.example.com:444' },
      { origin: ORIGIN, rpId: 'evil.example' },
      { origin: ORIGIN, flags: UP },
    ]) {
      const res = await register('Laptop', authenticator.create(await options(), ceremony))
      expect(res.status, JSON.stringify(ceremony)).toBe(400)
      expect(await res.json()).toEqual({ code: 'passkey_refused', message: expect.any(String) })
    }
    expect(await (await app.request('/auth/passkeys', { headers: auth })).json()).toEqual({ passkeys: [] })
  })

  it('refuses sign-ins from another origin or relying party, without user verification, or with a bad signature', async () => {
    const { core, events, authenticator, registered, signInOptions } = await world()
    const id = await registered()
    for (const ceremony of [
      { origin: 'https://evil.example' },
      { origin: ORIGIN, rpId: 'evil.example' },
      { origin: ORIGIN, flags: UP },
    ])
      expect(
        await core.passkeys.signIn(authenticator.get(id, await signInOptions(), ceremony), BROWSER, ADDRESS),
      ).toEqual({
        ok: false,
        error: { code: 'passkey_refused' },
      })
    const forged = authenticator.get(id, await signInOptions(), { origin: ORIGIN })
    forged.response.signature = Buffer.from('not a signature').toString('base64url')
    expect((await core.passkeys.signIn(forged, BROWSER, ADDRESS)).ok).toBe(false)
    expect(events.ofType('passkey.failed').map((event) => event.reason)).toEqual(
      Array(4).fill('verification_failed'),
    )
    expect(events.ofType('passkey.succeeded')).toEqual([])
  })
})
