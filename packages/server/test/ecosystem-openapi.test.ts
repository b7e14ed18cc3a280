// Every response of an end-to-end walk over the built server, checked against the OpenAPI document
// the server itself serves.
import { readFile, writeFile } from 'node:fs/promises'
import * as path from 'node:path'
import { waitFor } from '@flowadmin/testkit'
import { Secret, TOTP } from 'otpauth'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { OpenApiDocument } from '../../adapter-http/src/openapi.js'
import { createResponseValidator, type ResponseCheck } from '../../adapter-http/test/openapi-validate.js'
import { hashPassword } from '../src/index.js'
import { startBuiltServer, useUserDir } from './cli-process.js'
import { ADMIN_PASSWORD, FLOWS, SHOUT, TOOLS, writeAuthSettings, writeEcosystemUserDir } from './ecosystem.js'
import { type LocalRegistry, startLocalRegistry } from './local-registry.js'
import { createSoftwareAuthenticator } from './software-authenticator.js'

const dir = useUserDir('openapi', writeEcosystemUserDir)
let registry: LocalRegistry
const WAVE = { name: 'node-red-contrib-wave', version: '1.0.0', sets: { wave: ['wave'] } }
const SLOW = 'node-red-contrib-slow'

beforeAll(async () => {
  registry = await startLocalRegistry()
  await registry.publish(WAVE)
  registry.hang(SLOW)
}, 60_000)
afterAll(() => registry.close())

const form = (fields: Record<string, string>) => new URLSearchParams(fields)
const JSON_TYPE = { 'content-type': 'application/json' }

describe('the served OpenAPI document', () => {
  it('describes every response of a walk through login, settings, nodes, errors, throttling and revoke', async () => {
    // No login may wait for a password check: one more than the cores at once is shed (503).
    const settings = await writeAuthSettings(
      dir.userDir,
      ['node-red-admin'],
      {
        httpAdminRoot: '/admin',
        externalModules: {
          palette: { registry: registry.url, denyList: ['node-red-contrib-evil'], timeout: 10, wait: 0 },
        },
      },
      {
        loginQueue: { maxWaiting: 0, maxWaitingKnown: 0 },
        resourceServers: [{ id: 'fleet', secret: await hashPassword('fleet-secret') }],
        mfa: { key: 'the-second-factor-key-of-the-openapi-walk' },
        webauthn: { rpId: 'localhost', origins: ['http://localhost:1880'] },
      },
    )
    const { url } = await startBuiltServer(settings)
    expect(url).toMatch(/\/admin$/)

    const served = await fetch(`${url}/openapi.json`)
    expect(served.status).toBe(200)
    const document = (await served.clone().json()) as OpenApiDocument
    expect(document.servers).toEqual([{ url: '/admin', description: 'This service' }])
    const validator = createResponseValidator(document)
    const checks: Array<ResponseCheck & { request: string }> = []
    checks.push({
      ...(await validator.check('GET', `${url}/openapi.json`, served)),
      request: 'GET /openapi.json',
    })

    /** Sends a request, records its check, and returns the response. */
    const call = async (
      method: string,
      route: string,
      init: { headers?: Record<string, string>; body?: BodyInit } = {},
    ) => {
      const res = await fetch(`${url}${route}`, { method, ...init })
      checks.push({
        ...(await validator.check(method, `${url}${route}`, res)),
        request: `${method} ${route}`,
      })
      return res
    }
    const grant = {
      client_id: 'service-admin',
      grant_type: 'password',
      scope: '*',
      username: 'admin',
      password: ADMIN_PASSWORD,
    }
    const tokenOf = async (res: Response) => {
      expect(res.status).toBe(200)
      return ((await res.json()) as { access_token: string }).access_token
    }

    await call('GET', '/auth/login')
    await call('HEAD', '/auth/login')

    // Tokens: form and JSON, the ecosystem's client id, then every refusal.
    const admin = await tokenOf(await call('POST', '/auth/token', { body: form(grant) }))
    const cli = await tokenOf(
      await call('POST', '/auth/token', {
        headers: JSON_TYPE,
        body: JSON.stringify({ ...grant, client_id: 'node-red-admin' }),
      }),
    )
    const reader = await tokenOf(
      await call('POST', '/auth/token', { body: form({ ...grant, scope: 'read' }) }),
    )
    for (const fields of [{ grant_type: 'client_credentials' }, { scope: 'admin' }, { username: '' }]) {
      expect((await call('POST', '/auth/token', { body: form({ ...grant, ...fields }) })).status).toBe(400)
    }
    expect((await call('POST', '/auth/token', { body: JSON.stringify(grant) })).status).toBe(400)
    expect((await call('POST', '/auth/token', { body: form({ ...grant, password: 'wrong' }) })).status).toBe(
      401,
    )
    expect((await call('POST', '/auth/token', { body: form({ ...grant, client_id: 'other' }) })).status).toBe(
      401,
    )
    const big = 'x'.repeat(100_000)
    expect((await call('POST', '/auth/token', { headers: JSON_TYPE, body: big })).status).toBe(413)
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) {
      const res = await call('POST', '/auth/token', {
        body: form({ ...grant, username: 'ghost', password: 'guess' }),
      })
      statuses.push(res.status)
    }
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429])

    const as = (token: string, more: Record<string, string> = {}) => ({
      authorization: `Bearer ${token}`,
      ...more,
    })

    // Reads, with and without credentials.
    for (const route of [
      '/settings',
      '/nodes',
      `/nodes/${SHOUT.name}`,
      '/nodes/@acme%2Fnode-red-tools/upper',
    ]) {
      expect((await call('GET', route, { headers: as(cli) })).status).toBe(200)
      expect((await call('HEAD', route, { headers: as(reader) })).status).toBe(200)
      expect((await call('GET', route)).status).toBe(401)
      expect((await call('GET', route, { headers: as('not-a-token') })).status).toBe(401)
    }
    expect((await call('GET', `/nodes/${TOOLS.name}`, { headers: as(reader) })).status).toBe(200)
    expect((await call('GET', '/nodes/no-such-module', { headers: as(admin) })).status).toBe(404)
    expect((await call('GET', `/nodes/${TOOLS.name}/nope`, { headers: as(admin) })).status).toBe(404)

    // Writes: every outcome, for a module and for a node set.
    const put = (route: string, body: string, token = admin) =>
      call('PUT', route, { headers: as(token, JSON_TYPE), body })
    for (const [free, inUse] of [
      [`/nodes/${SHOUT.name}`, `/nodes/${TOOLS.name}`],
      [`/nodes/${TOOLS.name}/upper`, `/nodes/${TOOLS.name}/lower`],
    ] as const) {
      expect((await put(free, '{"enabled":false}')).status).toBe(200)
      expect((await put(free, '{"enabled":true}')).status).toBe(200)
      expect((await put(inUse, '{"enabled":false}')).status).toBe(400)
      expect((await put(free, '{"enabled":"false"}')).status).toBe(400)
      expect((await put(free, '{"enabled":')).status).toBe(400)
      expect((await call('PUT', free, { headers: as(admin), body: 'enabled=false' })).status).toBe(400)
      expect((await put(free, big)).status).toBe(413)
      expect((await put(free, '{"enabled":false}', reader)).status).toBe(401)
      expect((await call('PUT', free, { headers: JSON_TYPE, body: '{"enabled":false}' })).status).toBe(401)
      expect((await put(`${free}-missing`, '{"enabled":false}')).status).toBe(404)
      await writeFile(path.join(dir.userDir, 'flows.json'), '[{"type":')
      expect((await put(free, '{"enabled":false}')).status).toBe(503)
      await writeFile(path.join(dir.userDir, 'flows.json'), JSON.stringify(FLOWS))
    }

    // Logins beyond the verifier queue: answered at once, 503 with Retry-After.
    const burst = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        call('POST', '/auth/token', { body: form({ ...grant, username: `burst-${i}`, password: 'guess' }) }),
      ),
    )
    const burstStatuses = burst.map((res) => res.status)
    expect(burstStatuses).toContain(503)
    expect(burstStatuses.every((status) => status === 401 || status === 503)).toBe(true)

    // Health, readiness and metrics.
    expect((await call('GET', '/healthz')).status).toBe(200)
    expect((await call('GET', '/readyz')).status).toBe(200)
    expect((await call('GET', '/metrics')).status).toBe(401)
    expect((await call('GET', '/metrics', { headers: as(admin) })).status).toBe(200)

    // Installing and removing: every outcome.
    const install = (body: string, token = admin) =>
      call('POST', '/nodes', { headers: as(token, JSON_TYPE), body })
    const remove = (route: string, token = admin) => call('DELETE', route, { headers: as(token) })
    expect((await install(JSON.stringify({ module: WAVE.name, version: '^1' }))).status).toBe(200)
    expect((await install('{"module":"../x"}')).status).toBe(400)
    expect((await install('{"module":"node-red-contrib-evil"}')).status).toBe(400)
    expect((await install('{"module":"node-red-contrib-unpublished"}')).status).toBe(400)
    expect((await install(big)).status).toBe(413)
    expect((await install(JSON.stringify({ module: WAVE.name }), reader)).status).toBe(401)
    expect((await remove(`/nodes/${TOOLS.name}`)).status).toBe(400)
    expect((await remove('/nodes/no-such-module')).status).toBe(404)
    expect((await remove(`/nodes/${WAVE.name}`, reader)).status).toBe(401)
    await writeFile(path.join(dir.userDir, 'flows.json'), '[{"type":')
    expect((await remove(`/nodes/${WAVE.name}`)).status).toBe(503)
    await writeFile(path.join(dir.userDir, 'flows.json'), JSON.stringify(FLOWS))
    // A registry that never answers: past the time limit, and whoever comes meanwhile is busy.
    const slow = install(JSON.stringify({ module: SLOW }))
    // npm asks the registry for it only once the install holds the palette: then others are busy.
    await waitFor(() => registry.requestsFor(SLOW).length > 0, `npm to ask the registry for ${SLOW}`)
    expect((await install(JSON.stringify({ module: WAVE.name }))).status).toBe(409)
    expect((await remove(`/nodes/${WAVE.name}`)).status).toBe(409)
    expect((await slow).status).toBe(504)
    // package.json names a package the registry never answers for: the removal runs past the limit.
    const manifest = path.join(dir.userDir, 'package.json')
    const original = await readFile(manifest, 'utf8')
    const parsed = JSON.parse(original)
    await writeFile(
      manifest,
      JSON.stringify({ ...parsed, dependencies: { ...parsed.dependencies, [SLOW]: '^1' } }),
    )
    expect((await remove(`/nodes/${WAVE.name}`)).status).toBe(504)
    await writeFile(manifest, original)
    expect((await remove(`/nodes/${WAVE.name}`)).status).toBe(204)
    // Sessions and API tokens: list, create, end one and all of a user's.
    const tokens = (method: string, route: string, token: string | null, body?: string) =>
      call(method, route, {
        headers: token === null ? JSON_TYPE : as(token, JSON_TYPE),
        ...(body === undefined ? {} : { body }),
      })
    expect((await tokens('POST', '/auth/tokens', reader, '{"name":"ci job"}')).status).toBe(201)
    expect((await tokens('POST', '/auth/tokens', reader, '{"name":"ci","scope":"*"}')).status).toBe(400)
    expect((await tokens('POST', '/auth/tokens', reader, big)).status).toBe(413)
    expect((await tokens('POST', '/auth/tokens', null, '{"name":"ci"}')).status).toBe(401)
    const listed = await tokens('GET', '/auth/tokens?user=*', admin)
    expect(listed.status).toBe(200)
    const all = ((await listed.json()) as { tokens: Array<{ id: string; name: string | null }> }).tokens
    expect((await tokens('GET', '/auth/tokens', null)).status).toBe(401)
    // A person's own access: each place and what they may do there.
    expect((await tokens('GET', '/auth/access', reader)).status).toBe(200)
    expect((await tokens('GET', '/auth/access', null)).status).toBe(401)
    // Who holds which role where: for `*` on flowadmin alone.
    expect((await tokens('GET', '/auth/grants', admin)).status).toBe(200)
    expect((await tokens('GET', '/auth/grants', reader)).status).toBe(401)
    const api = all.find((token) => token.name === 'ci job')
    expect((await tokens('DELETE', `/auth/tokens/${api?.id}`, admin)).status).toBe(204)
    expect((await tokens('DELETE', `/auth/tokens/${api?.id}`, admin)).status).toBe(404)
    expect((await tokens('DELETE', `/auth/tokens/${api?.id}`, null)).status).toBe(401)
    expect((await tokens('DELETE', '/auth/tokens', admin)).status).toBe(400)
    expect((await tokens('DELETE', '/auth/tokens?user=reader', null)).status).toBe(401)
    const spare = await tokenOf(
      await call('POST', '/auth/token', { body: form({ ...grant, scope: 'read' }) }),
    )
    expect((await tokens('DELETE', '/auth/tokens?user=someone-else', reader)).status).toBe(401)
    expect((await call('GET', '/settings', { headers: as(spare) })).status).toBe(200)

    // A resource server asks about tokens (RFC 7662), and who called is listed.
    const fleet = `Basic ${btoa('fleet:fleet-secret')}`
    const introspect = (body: BodyInit, authorization: string | null = fleet) =>
      call('POST', '/auth/introspect', {
        headers: {
          'Content-Type': 'application/x-www-form-urlencoded',
          ...(authorization ? { Authorization: authorization } : {}),
        },
        body,
      })
    // A token for the fleet (its editor's login: the password grant with the fleet's credentials)
    // is active to it; a token for flowadmin is not.
    const { client_id: _console, ...editorGrant } = { ...grant, scope: 'read' }
    const editor = await tokenOf(
      await call('POST', '/auth/token', {
        headers: { Authorization: fleet, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: form(editorGrant),
      }),
    )
    expect(await (await introspect(form({ token: editor }))).json()).toMatchObject({
      active: true,
      username: 'admin',
      aud: 'fleet',
    })
    expect(await (await introspect(form({ token: spare }))).json()).toEqual({ active: false })
    expect((await call('GET', '/settings', { headers: as(editor) })).status).toBe(401)
    expect(await (await introspect(form({ token: 'unknown' }))).json()).toEqual({ active: false })
    expect((await introspect('')).status).toBe(400)
    expect((await introspect(`token=${'x'.repeat(70_000)}`)).status).toBe(413)
    expect((await introspect(form({ token: spare }), null)).status).toBe(401)
    // An instance reports its audit events; the trail is searched and exported.
    const report = (body: string, authorization: string | null = fleet) =>
      call('POST', '/audit/events', {
        headers: { ...JSON_TYPE, ...(authorization ? { Authorization: authorization } : {}) },
        body,
      })
    const event = { time: Date.now(), instance: 'line-1', actor: 'admin', event: 'flows.set', address: null }
    expect((await report(JSON.stringify({ events: [event] }))).status).toBe(200)
    expect((await report(JSON.stringify({ events: [{ ...event, server: 'other' }] }))).status).toBe(400)
    expect(
      (await report(JSON.stringify({ events: [{ ...event, details: { x: 'x'.repeat(1_100_000) } }] })))
        .status,
    ).toBe(413)
    expect((await report('{"events":[]}', null)).status).toBe(401)
    for (const accept of ['application/json', 'text/csv', 'application/x-ndjson']) {
      expect(
        (await call('GET', '/audit?instance=fleet', { headers: { ...as(admin), Accept: accept } })).status,
      ).toBe(200)
    }
    expect((await call('GET', '/audit?since=yesterday', { headers: as(admin) })).status).toBe(400)
    expect((await call('GET', '/audit', {})).status).toBe(401)

    for (let i = 0; i < 5; i++) await introspect(form({ token: spare }), `Basic ${btoa(`fleet:guess${i}`)}`)
    expect((await introspect(form({ token: spare }), `Basic ${btoa('fleet:guess')}`)).status).toBe(429)
    expect((await report('{"events":[]}', `Basic ${btoa('fleet:guess')}`)).status).toBe(429)
    expect((await call('GET', '/auth/resource-servers', { headers: as(admin) })).status).toBe(200)
    expect((await call('GET', '/auth/resource-servers', { headers: as(reader) })).status).toBe(401)

    // Revoke, then the token is refused.
    const revoke = (body: BodyInit, headers: Record<string, string> = {}) =>
      call('POST', '/auth/revoke', { headers, body })
    expect((await revoke(form({ token: cli }), as(admin))).status).toBe(200)
    expect((await revoke(JSON.stringify({ token: 'unknown' }), as(admin, JSON_TYPE))).status).toBe(200)
    expect((await revoke(form({ token: '' }), as(admin))).status).toBe(400)
    expect((await revoke(big, as(admin, JSON_TYPE))).status).toBe(413)
    expect((await revoke(form({ token: admin }))).status).toBe(401)
    expect((await call('GET', '/settings', { headers: as(cli) })).status).toBe(401)

    /**
     * A session of the admin from the sign-in page, as a browser without script gets one: the
     * password, then a code of `secret` (the next step's, unused), then the console's code traded.
     */
    const signInWithCode = async (secret: string) => {
      const page = await fetch(`${url}/auth/signin?return_to=/admin/`)
      const cookie = (page.headers.get('set-cookie') ?? '').split(';')[0] ?? ''
      const post = (step: string, fields: Record<string, string>) =>
        fetch(`${url}/auth/signin${step}`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
          body: form({ return_to: '/admin/', ...fields }),
        })
      const step = await (await post('', { username: 'admin', password: ADMIN_PASSWORD })).text()
      const ticket = /name="ticket" value="([^"]*)"/.exec(step)?.[1] ?? ''
      const next = new TOTP({ secret: Secret.fromBase32(secret) }).generate({
        timestamp: Date.now() + 30_000,
      })
      const done = await post('/code', { ticket, code: next })
      expect(done.status).toBe(303)
      const code = /#sso_code=([\w-]+)$/.exec(done.headers.get('location') ?? '')?.[1] ?? ''
      return tokenOf(
        await fetch(`${url}/auth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', cookie },
          body: form({ grant_type: 'authorization_code', code, client_id: 'service-editor' }),
        }),
      )
    }

    // A second factor, enrolled with the last token left (which ends the other sessions), removed
    // (which ends them all but the remover's), then wrong codes until they are throttled.
    expect((await tokens('GET', '/auth/mfa', spare)).status).toBe(200)
    expect((await tokens('GET', '/auth/mfa', null)).status).toBe(401)
    expect((await tokens('POST', '/auth/mfa/totp/confirm', spare, '{"code":"123456"}')).status).toBe(409)
    expect((await tokens('POST', '/auth/mfa/totp/confirm', null, '{"code":"123456"}')).status).toBe(401)
    expect((await tokens('POST', '/auth/mfa/totp', null)).status).toBe(401)
    // A session of a password alone removes no second factor (403), and changes nothing.
    expect((await tokens('DELETE', '/auth/mfa?user=admin', spare)).status).toBe(403)
    expect((await tokens('DELETE', '/auth/passkeys/x', spare)).status).toBe(403)
    const startTotp = async (token: string) => {
      const started = await tokens('POST', '/auth/mfa/totp', token)
      expect(started.status).toBe(200)
      return ((await started.json()) as { secret: string }).secret
    }
    const secret = await startTotp(spare)
    expect((await tokens('POST', '/auth/mfa/totp/confirm', spare, big)).status).toBe(413)
    expect((await tokens('POST', '/auth/mfa/totp/confirm', spare, '{}')).status).toBe(400)
    const code = new TOTP({ secret: Secret.fromBase32(secret) }).generate()
    expect((await tokens('POST', '/auth/mfa/totp/confirm', spare, JSON.stringify({ code }))).status).toBe(200)
    expect((await tokens('POST', '/auth/mfa/totp', spare)).status).toBe(409)
    // Removing needs a sign-in with a second factor (and `*` for another's); the enrolment ended the
    // other sessions, so a new one. The password grant now refuses the admin (403 mfa_required): the
    // session comes from the sign-in page, with a code.
    expect((await call('POST', '/auth/token', { body: form(grant) })).status).toBe(403)
    const full = await signInWithCode(secret)
    expect((await tokens('DELETE', '/auth/mfa?user=', full)).status).toBe(400)
    expect((await tokens('DELETE', '/auth/mfa?user=admin', null)).status).toBe(401)
    expect((await tokens('DELETE', '/auth/mfa?user=admin', full)).status).toBe(204)
    expect((await tokens('DELETE', '/auth/mfa?user=admin', full)).status).toBe(404)
    // The removal ended the admin's other sessions, the enrolling one's too.
    expect((await call('GET', '/settings', { headers: as(spare) })).status).toBe(401)
    await startTotp(full)
    for (let i = 0; i < 5; i++) {
      expect((await tokens('POST', '/auth/mfa/totp/confirm', full, '{"code":"000000"}')).status).toBe(400)
    }
    expect((await tokens('POST', '/auth/mfa/totp/confirm', full, '{"code":"000000"}')).status).toBe(429)

    // Passkeys, registered with a software authenticator until the person has ten.
    const authenticator = createSoftwareAuthenticator()
    const passkeyOptions = async () => {
      const res = await tokens('POST', '/auth/passkeys/options', full)
      expect(res.status).toBe(200)
      return ((await res.json()) as { options: { challenge: string; rp: { id: string } } }).options
    }
    const passkey = async (options: { challenge: string; rp: { id: string } }) =>
      JSON.stringify({
        name: 'Laptop',
        response: authenticator.create(options, { origin: 'http://localhost:1880' }),
      })
    expect((await tokens('GET', '/auth/passkeys', full)).status).toBe(200)
    expect((await tokens('GET', '/auth/passkeys', null)).status).toBe(401)
    expect((await tokens('POST', '/auth/passkeys/options', null)).status).toBe(401)
    expect((await tokens('POST', '/auth/passkeys', full, '{}')).status).toBe(400)
    expect((await tokens('POST', '/auth/passkeys', full, big)).status).toBe(413)
    expect(
      (
        await tokens(
          'POST',
          '/auth/passkeys',
          null,
          await passkey({ challenge: 'x', rp: { id: 'localhost' } }),
        )
      ).status,
    ).toBe(401)
    const first = await tokens('POST', '/auth/passkeys', full, await passkey(await passkeyOptions()))
    expect(first.status).toBe(201)
    const { id } = ((await first.json()) as { passkey: { id: string } }).passkey
    expect((await tokens('DELETE', `/auth/passkeys/${id}`, full)).status).toBe(204)
    expect((await tokens('DELETE', `/auth/passkeys/${id}`, full)).status).toBe(404)
    expect((await tokens('DELETE', `/auth/passkeys/${id}`, null)).status).toBe(401)
    for (let i = 0; i < 9; i++)
      expect(
        (await tokens('POST', '/auth/passkeys', full, await passkey(await passkeyOptions()))).status,
      ).toBe(201)
    // Two ceremonies begun at nine: the first makes ten, the second is one too many.
    const [tenth, eleventh] = [await passkeyOptions(), await passkeyOptions()]
    expect((await tokens('POST', '/auth/passkeys', full, await passkey(tenth))).status).toBe(201)
    expect((await tokens('POST', '/auth/passkeys', full, await passkey(eleventh))).status).toBe(409)
    expect((await tokens('POST', '/auth/passkeys/options', full)).status).toBe(409)

    // Sign out everywhere, with the last token left.
    expect((await tokens('DELETE', '/auth/tokens?user=admin', full)).status).toBe(200)
    expect((await call('GET', '/settings', { headers: as(full) })).status).toBe(401)

    for (const check of checks) expect(check.problems, `${check.request} → ${check.status}`).toEqual([])
    // Every documented status of every operation was seen, except the unexpected 500, the 503
    // of a store that cannot be reached, which a walk on SQLite cannot provoke (the PostgreSQL
    // fault tests do), a readiness 503 (a failing store; the HTTP adapter's tests produce it), and
    // the 409 of passkeys not configured where nothing else answers 409 (they are, in this walk;
    // the HTTP adapter's tests produce it). The sign-in page's steps and `/auth/authorize` (HTML
    // pages and forms for a browser, every status produced by the HTTP adapter's OpenAPI walk and
    // over this built server by sign-in-page.test.ts), and the 403 of a session too old to add a
    // second factor (the adapter's walk moves its clock), are not walked here.
    const outageOnly = new Set(
      Object.values(document.paths).flatMap((item) =>
        Object.values(item as Record<string, { operationId?: string; responses?: Record<string, unknown> }>)
          .filter((operation) => {
            const answer = operation.responses?.['503'] as { $ref?: string } | undefined
            return answer?.$ref === '#/components/responses/StorageUnavailable'
          })
          .map((operation) => `${operation.operationId} 503`),
      ),
    )
    const seen = new Set(checks.map((check) => `${check.operation} ${check.status}`))
    expect([...seen].sort()).toEqual(
      validator
        .documented()
        .filter(
          (pair) =>
            !pair.endsWith(' 500') &&
            !outageOnly.has(pair) &&
            !['getReadiness 503', 'listPasskeys 409', 'removePasskey 409'].includes(pair) &&
            !/^(signIn\w*|authorize) /.test(pair) &&
            !['startTotpEnrolment 403', 'passkeyRegistrationOptions 403'].includes(pair),
        )
        .sort(),
    )
  }, 120_000)
})
