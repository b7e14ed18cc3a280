// 30,000 sign-ins started and never answered (passkey sign-in challenges and single sign-on
// starts, each from an IPv6 /64 of its own, behind the trusted proxy) against the server with a
// real OpenID provider and a SQLite store: a person's own passkey sign-in and provider sign-in
// still work, the store holds nothing of the flood, and memory stays bounded. The figures are
// printed (row counts, file size, memory), not timed.
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { setFlagsFromString } from 'node:v8'
import { runInNewContext } from 'node:vm'
import { openDatabase } from '@flowadmin/adapter-sqlite'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { hashPassword, type RunningServer, startServer } from '../src/index.js'
import { captureLog } from './log-capture.js'
import {
  browse,
  CLIENT_ID,
  CLIENT_SECRET,
  createCookieJar,
  startProvider,
  type TestProvider,
  walkSignIn,
} from './oidc-provider.js'
import { logInAs } from './password-grant.js'
import { createSoftwareAuthenticator } from './software-authenticator.js'

const STARTS = 15_000
const IN_FLIGHT = 32
const ORIGIN = 'http://localhost:1880'

let userDir: string
let provider: TestProvider
let server: RunningServer

beforeAll(async () => {
  userDir = await mkdtemp(path.join(tmpdir(), 'flowadmin-flood-'))
  provider = await startProvider()
  server = await startServer({
    port: 0,
    userDir,
    stdout: () => {},
    logger: captureLog().logger,
    settings: {
      storage: 'sqlite',
      auditLog: 'off',
      trustProxy: ['127.0.0.1'],
      adminAuth: {
        users: [{ username: 'alice', password: await hashPassword('alice-pw'), permissions: '*' }],
        oidc: {
          issuer: provider.issuer,
          clientId: CLIENT_ID,
          clientSecret: CLIENT_SECRET,
          label: 'Sign in with Example ID',
          scope: 'openid profile groups',
          permissions: { claim: 'groups', map: { 'nr-admins': '*' } },
        },
        webauthn: { rpId: 'localhost', origins: [ORIGIN] },
      },
    } as never,
  })
  await provider.register({
    redirectUris: [`${server.url}/auth/strategy/callback`],
    backchannelLogoutUri: `${server.url}/auth/strategy/backchannel-logout`,
  })
  provider.people.set('pat-sub', { username: 'pat', groups: ['nr-admins'] })
}, 30_000)
afterAll(async () => {
  await server?.close()
  await provider?.close()
  await rm(userDir, { recursive: true, force: true })
})

/** A client address of /64 number `i`, as the trusted proxy forwards it. */
const from = (i: number) => ({
  'X-Forwarded-For': `2001:db8:${(i >> 12).toString(16)}:${(i & 0xfff).toString(16)}::1`,
})

/** Runs `count` requests, IN_FLIGHT at a time; how many got each status. */
async function flood(count: number, one: (i: number) => Promise<Response>): Promise<Record<number, number>> {
  const statuses: Record<number, number> = {}
  let next = 0
  const worker = async () => {
    while (next < count) {
      const res = await one(next++)
      await res.arrayBuffer()
      statuses[res.status] = (statuses[res.status] ?? 0) + 1
    }
  }
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker))
  return statuses
}

/** What the store holds of sign-ins: spent challenges, codes waiting, and the file's size. */
async function storeFigures() {
  const file = path.join(userDir, 'flowadmin.db')
  const db = openDatabase(file)
  const count = (table: string) => (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n
  const figures = { spentChallenges: count('spent_challenges'), codes: count('sso_codes') }
  db.close()
  const size = async (name: string) => (await stat(name).catch(() => ({ size: 0 }))).size
  return { ...figures, bytes: (await size(file)) + (await size(`${file}-wal`)) }
}

/** A full garbage collection, so that the heap measured is what is still held. */
setFlagsFromString('--expose-gc')
const collect = runInNewContext('gc') as () => void

const megabytes = (bytes: number) => Math.round((bytes / 1024 / 1024) * 10) / 10

/** A console's one-time code traded for a session, from the browser (cookie) it was given to. */
async function trade(code: string, cookie: string) {
  const res = await fetch(`${server.url}/auth/token`, {
    method: 'POST',
    headers: { Cookie: cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: 'service-editor' }),
  })
  return res.status
}

it(`leaves a person's passkey and provider sign-ins working after ${2 * STARTS} starts never answered, storing nothing of them`, async () => {
  // Alice registers a passkey, with a session of her password (she has no factor yet).
  const login = await logInAs(server.url, 'alice', 'alice-pw')
  const { access_token } = (await login.json()) as { access_token: string }
  const bearer = { Authorization: `Bearer ${access_token}` }
  const authenticator = createSoftwareAuthenticator()
  const creation = await fetch(`${server.url}/auth/passkeys/options`, { method: 'POST', headers: bearer })
  const { options } = (await creation.json()) as { options: { challenge: string; rp: { id?: string } } }
  const registered = await fetch(`${server.url}/auth/passkeys`, {
    method: 'POST',
    headers: { ...bearer, 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'Laptop', response: authenticator.create(options, { origin: ORIGIN }) }),
  })
  expect(registered.status).toBe(201)
  const { id } = ((await registered.json()) as { passkey: { id: string } }).passkey

  collect()
  const before = { store: await storeFigures(), memory: process.memoryUsage() }
  const began = Date.now()
  // The flood: passkey challenges for browsers of their own, and starts at the provider.
  const passkeyStarts = await flood(STARTS, (i) =>
    fetch(`${server.url}/auth/signin/passkey/options`, {
      method: 'POST',
      headers: {
        ...from(i),
        'Content-Type': 'application/json',
        Cookie: `flowadmin_sso=${randomBytes(32).toString('base64url')}`,
      },
      body: '{}',
    }),
  )
  const providerStarts = await flood(STARTS, (i) =>
    fetch(`${server.url}/auth/strategy`, { headers: from(STARTS + i), redirect: 'manual' }),
  )
  const seconds = (Date.now() - began) / 1000
  collect()
  const after = { store: await storeFigures(), memory: process.memoryUsage() }
  expect(passkeyStarts).toEqual({ 200: STARTS })
  expect(providerStarts).toEqual({ 302: STARTS })
  // Nothing of them is in the store.
  expect(after.store.spentChallenges).toBe(before.store.spentChallenges)
  expect(after.store.codes).toBe(0)

  // Alice signs in with her passkey, from a /64 the flood used.
  const page = await fetch(`${server.url}/auth/signin`, { headers: from(7) })
  const cookie = (page.headers.getSetCookie()[0] ?? '').split(';')[0] ?? ''
  const json = (route: string, body: unknown) =>
    fetch(`${server.url}${route}`, {
      method: 'POST',
      headers: { ...from(7), Cookie: cookie, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    })
  const given = (await (await json('/auth/signin/passkey/options', {})).json()) as {
    options: { challenge: string; rpId?: string }
  }
  const signedIn = await json('/auth/signin/passkey', {
    response: authenticator.get(id, given.options, { origin: ORIGIN }),
    destination: { return_to: '/' },
  })
  expect(signedIn.status).toBe(200)
  const { redirect } = (await signedIn.json()) as { redirect: string }
  expect(await trade(redirect.slice('/#sso_code='.length), cookie)).toBe(200)

  // Pat signs in with the provider.
  const jar = createCookieJar()
  const walked = await walkSignIn(jar, `${server.url}/auth/strategy`, 'pat-sub', (url) =>
    url.includes('#sso_code='),
  )
  const code = new URL(walked.url).hash.slice('#sso_code='.length)
  expect(await trade(code, jar.header(server.url))).toBe(200)
  expect((await browse(jar, `${server.url}/auth/login`)).status).toBe(200)

  // Each answered sign-in left one spent challenge, nothing else.
  const done = await storeFigures()
  expect(done.spentChallenges).toBe(before.store.spentChallenges + 2)
  console.info(
    `${2 * STARTS} sign-in starts never answered (${STARTS} passkey, ${STARTS} provider, each from its own /64) in ${seconds} s: ` +
      `store rows of sign-ins ${before.store.spentChallenges} spent challenges and ${before.store.codes} codes before, ` +
      `${after.store.spentChallenges} and ${after.store.codes} after; database ${megabytes(before.store.bytes)} MB before, ${megabytes(after.store.bytes)} MB after; ` +
      `heap ${megabytes(before.memory.heapUsed)} MB before, ${megabytes(after.memory.heapUsed)} MB after; ` +
      `rss ${megabytes(before.memory.rss)} MB before, ${megabytes(after.memory.rss)} MB after (after a full collection); then the person's passkey and provider sign-ins: 200, ${done.spentChallenges - before.store.spentChallenges} rows`,
  )
}, 300_000)
