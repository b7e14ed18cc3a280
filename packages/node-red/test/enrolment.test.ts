// Enrolment: an instance given an enrolment token trades it for a credential of its own, kept in
// its userDir; refusals are logged once each and never reach Node-RED.
import { readdirSync, readFileSync } from 'node:fs'
import * as path from 'node:path'
import { afterAll, afterEach, describe, expect, test } from 'vitest'
import { basic, type Instance, OWN, startFlowadmin, startInstance, until } from './enrol-setup.js'
import { flowadmin } from './load.js'
import { CLIENT_ID, CLIENT_SECRET, type StubFlowadmin } from './stub-flowadmin.js'

const stubs: StubFlowadmin[] = []
const running: Instance[] = []

async function flowadminStub() {
  const stub = await startFlowadmin()
  stubs.push(stub)
  return stub
}

async function start(...args: Parameters<typeof startInstance>) {
  const instance = await startInstance(...args)
  running.push(instance)
  return instance
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((instance) => instance.close()))
})

afterAll(async () => {
  await Promise.all(stubs.map((stub) => stub.close()))
})

/** Every file in the folder, read whole. */
const contentsOf = (folder: string) =>
  readdirSync(folder).map((name) => readFileSync(path.join(folder, name), 'utf8'))

describe('enrolment', () => {
  test('the token from the environment: a credential of its own, kept 0600 with its fields; the token kept nowhere and not needed at the next start', async () => {
    const stub = await flowadminStub()
    const token = stub.identity.token()
    process.env.FLOWADMIN_ENROLMENT_TOKEN = token
    let first: Instance
    try {
      first = await start(stub, { ...OWN, instanceId: 'line-1' })
    } finally {
      delete process.env.FLOWADMIN_ENROLMENT_TOKEN
    }
    await until(() => first.kept() !== null && stub.fleet.pollsOf('line-1').length > 0)
    expect(stub.identity.enrolments).toEqual([
      { token, instance: 'line-1', nodeRedVersion: expect.any(String) },
    ])
    const kept = first.kept()
    expect(kept).toEqual({
      url: stub.url,
      instance: 'line-1',
      resourceServer: CLIENT_ID,
      clientId: `${CLIENT_ID}/line-1`,
      clientSecret: stub.identity.secretsOf('line-1').secret,
      machine: expect.stringMatching(/^[0-9a-f]{64}$/),
    })
    expect(first.mode()).toBe(0o600)
    // The polls carry the instance's own credential.
    expect(stub.fleet.pollsOf('line-1')[0]?.authorization).toBe(
      basic(kept?.clientId ?? '', kept?.clientSecret ?? ''),
    )
    expect(contentsOf(first.userDir).some((text) => text.includes(token))).toBe(false)
    expect(first.lines.some((line) => line.includes(token))).toBe(false)
    expect(first.lines).toContain(
      `enrolment: this instance is enrolled at flowadmin at ${stub.url} as "line-1"; its credential is kept in ${first.file} and the enrolment token is no longer needed`,
    )
    await first.close()

    // Node-RED starts again on the same userDir without the token: its credential is enough.
    const polled = stub.fleet.pollsOf('line-1').length
    const again = await start(stub, { ...OWN }, first.userDir)
    await until(() => stub.fleet.pollsOf('line-1').length > polled)
    expect(stub.identity.enrolments).toHaveLength(1)
    expect(stub.fleet.pollsOf('line-1').at(-1)?.authorization).toBe(
      basic(kept?.clientId ?? '', kept?.clientSecret ?? ''),
    )
    expect(again.lines.filter((line) => line.startsWith('enrolment:'))).toEqual([])
  })

  test('its audit events and introspections carry its credential, under its enrolled id', async () => {
    const stub = await flowadminStub()
    const instance = await start(stub, { ...OWN, enrolmentToken: stub.identity.token() })
    await until(() => instance.kept() !== null)
    const kept = instance.kept()
    const own = basic(kept?.clientId ?? '', kept?.clientSecret ?? '')
    const token = stub.issue('admin', '*')
    await expect(instance.settings.adminAuth.tokens(token)).resolves.toEqual({
      username: 'admin',
      permissions: '*',
    })
    expect(stub.to('/auth/introspect').at(-1)?.authorization).toBe(own)
    instance.nodeRed.setFlows([{ id: 't', type: 'tab' }])
    await until(() => stub.audit.events.length > 0)
    expect(stub.to('/audit/events').every((request) => request.authorization === own)).toBe(true)
    expect(new Set(stub.audit.events.map((event) => event.instance))).toEqual(new Set([kept?.instance]))
  })

  test('not enrolled yet: logins and tokens are refused (never thrown), said once', async () => {
    const stub = await flowadminStub()
    stub.identity.refuseNext({
      status: 429,
      body: { code: 'throttled', message: 'Slow down' },
      retryAfter: '1',
    })
    const instance = await start(stub, { ...OWN, enrolmentToken: stub.identity.token() })
    await until(() => stub.identity.enrolments.length === 1)
    const token = stub.issue('admin', '*')
    await expect(instance.settings.adminAuth.tokens(token)).resolves.toBeNull()
    await expect(instance.settings.adminAuth.tokens(token)).resolves.toBeNull()
    expect(instance.lines.filter((line) => line.includes('has no credential for flowadmin'))).toEqual([
      `this instance has no credential for flowadmin at ${stub.url} yet (it is not enrolled): logins and tokens are refused until it has one`,
    ])
    expect(stub.to('/auth/introspect')).toEqual([])
    // Throttled: tried again after Retry-After, then enrolled; tokens are checked from then on.
    await until(() => instance.kept() !== null)
    expect(instance.lines).toContain(
      `enrolment: flowadmin at ${stub.url} refused this instance's enrolment (HTTP 429 throttled: Slow down): too many enrolments at once; tried again later`,
    )
    await until(() => instance.lines.some((line) => line.startsWith('enrolment: this instance is enrolled')))
    await expect(instance.settings.adminAuth.tokens(token)).resolves.toMatchObject({ username: 'admin' })
  })

  test.each([
    [
      { status: 400, body: { code: 'invalid_request', message: 'nodeRedVersion is missing' } },
      'HTTP 400 invalid_request: nodeRedVersion is missing): flowadmin found the request invalid',
    ],
    [
      { status: 400, body: { code: 'instance_mismatch', message: 'The token is for line-9' } },
      'HTTP 400 instance_mismatch: The token is for line-9): the enrolment token is for another instance id than the instanceId option',
    ],
    [
      { status: 409, body: { code: 'instance_conflict', message: 'line-1 is enrolled' } },
      'HTTP 409 instance_conflict: line-1 is enrolled): another instance is enrolled with this id: give it another instanceId, or revoke the other',
    ],
    [
      { status: 409, body: { code: 'too_many_instances', message: 'At most 500' } },
      'HTTP 409 too_many_instances: At most 500): the resource server has as many instances as it may have',
    ],
  ])('refused (%j): one line, no token in it, nothing kept, Node-RED unharmed', async (refusal, said) => {
    const stub = await flowadminStub()
    stub.identity.refuseNext(refusal)
    const token = stub.identity.token()
    const instance = await start(stub, { ...OWN, enrolmentToken: token, instanceId: 'line-1' })
    await until(() => instance.lines.some((line) => line.includes('refused this instance')))
    expect(instance.lines.filter((line) => line.includes('refused this instance'))).toEqual([
      `enrolment: flowadmin at ${stub.url} refused this instance's enrolment (${said}; tried again later`,
    ])
    expect(instance.lines.some((line) => line.includes(token))).toBe(false)
    expect(instance.kept()).toBeNull()
    await expect(instance.settings.adminAuth.tokens(stub.issue('admin', '*'))).resolves.toBeNull()
    expect(stub.fleet.pollsOf('line-1')).toEqual([])
  })

  test('a token used twice, or expired: 401 invalid_enrolment, said once, no credential', async () => {
    const stub = await flowadminStub()
    const spent = stub.identity.token()
    const first = await start(stub, { ...OWN, enrolmentToken: spent })
    await until(() => first.kept() !== null)
    const expired = stub.identity.token()
    stub.identity.expire(expired)
    for (const token of [spent, expired]) {
      const other = await start(stub, { ...OWN, enrolmentToken: token })
      await until(() => other.lines.some((line) => line.includes('refused this instance')))
      expect(other.lines).toEqual([
        `enrolment: flowadmin at ${stub.url} refused this instance's enrolment (HTTP 401 invalid_enrolment: The enrolment token is not valid): the enrolment token is unknown, already used or expired: give this instance a new one; tried again later`,
      ])
      expect(other.kept()).toBeNull()
    }
  })
})

describe('the shared secret, as before', () => {
  test('without an enrolment token or a credential: the shared clientId and secret, no enrolment, no file', async () => {
    const stub = await flowadminStub()
    const instance = await start(stub, { instanceId: 'line-2' })
    await until(() => stub.fleet.pollsOf('line-2').length > 0)
    expect(stub.fleet.pollsOf('line-2')[0]?.authorization).toBe(basic(CLIENT_ID, CLIENT_SECRET))
    await expect(instance.settings.adminAuth.tokens(stub.issue('admin', '*'))).resolves.toMatchObject({
      username: 'admin',
    })
    expect(stub.to('/auth/introspect').at(-1)?.authorization).toBe(basic(CLIENT_ID, CLIENT_SECRET))
    expect(stub.identity.enrolments).toEqual([])
    expect(instance.kept()).toBeNull()
  })

  test('the options: a clientId without its secret is still refused; the enrolment token never shown', () => {
    const url = 'https://flowadmin.example'
    const refusal = (options: object) => {
      try {
        flowadmin.adminAuth(options as never)
        return 'accepted'
      } catch (error) {
        return (error as Error).message
      }
    }
    expect(refusal({ url, clientId: 'fleet' })).toContain('clientSecret is missing')
    expect(refusal({ url, enrolmentToken: 'fae_x y' })).toBe(
      '@flowadmin/node-red: enrolmentToken must be the enrolment token flowadmin gave (printable, without spaces, at most 1024 characters)',
    )
    expect(refusal({ url, enrolmentToken: 'fae_abc', log: () => {} })).toBe('accepted')
    expect(refusal({ url, log: () => {} })).toBe('accepted')
  })
})
