// A credential of its own after enrolment: not used on another machine, rotated when flowadmin asks,
// and refused once revoked, without harm to Node-RED.
import { chmodSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { afterAll, afterEach, describe, expect, test } from 'vitest'
import type { StrategyAdminAuth } from '../index.js'
import {
  basic,
  CREDENTIAL_FILE,
  type Instance,
  OWN,
  startFlowadmin,
  startInstance,
  until,
} from './enrol-setup.js'
import { desiredState } from './fleet-setup.js'
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

/** A userDir holding a credential file made on another machine (a copied VM or image). */
function copiedUserDir(url: string) {
  const userDir = mkdtempSync(path.join(tmpdir(), 'flowadmin-copy-'))
  const copied = {
    url,
    instance: 'original',
    resourceServer: CLIENT_ID,
    clientId: `${CLIENT_ID}/original`,
    clientSecret: 'fai_of-the-original-machine',
    machine: 'f'.repeat(64),
  }
  writeFileSync(path.join(userDir, CREDENTIAL_FILE), JSON.stringify(copied), { mode: 0o600 })
  return userDir
}

describe('a copy of a userDir on another machine', () => {
  test('its credential is not used: one line, and the copy enrols with its token as an instance of its own', async () => {
    const stub = await flowadminStub()
    const userDir = copiedUserDir(stub.url)
    const instance = await start(stub, { ...OWN, enrolmentToken: stub.identity.token() }, userDir)
    await until(() => instance.kept()?.instance === 'nr-1')
    expect(instance.lines[0]).toBe(
      `enrolment: ${instance.file} was made on another machine (a copy of a VM or of a container image with its userDir): this copy is not enrolled; it is not used: this instance enrols with its enrolment token`,
    )
    expect(instance.kept()?.machine).not.toBe('f'.repeat(64))
    await until(() => stub.fleet.pollsOf('nr-1').length > 0)
    expect(stub.fleet.pollsOf('original')).toEqual([])
    const original = basic(`${CLIENT_ID}/original`, 'fai_of-the-original-machine')
    expect(stub.received.filter((request) => request.authorization === original)).toEqual([])
  })

  test('without a token, the shared secret is used, and the line says to enrol the copy', async () => {
    const stub = await flowadminStub()
    const instance = await start(stub, { instanceId: 'line-3' }, copiedUserDir(stub.url))
    await until(() => stub.fleet.pollsOf('line-3').length > 0)
    expect(instance.lines).toContain(
      `enrolment: ${instance.file} was made on another machine (a copy of a VM or of a container image with its userDir): this copy is not enrolled; it is not used: the shared clientId and clientSecret are used (enrol this instance: give it an enrolment token)`,
    )
    expect(stub.fleet.pollsOf('line-3')[0]?.authorization).toBe(basic(CLIENT_ID, CLIENT_SECRET))
  })
})

describe('a credential of its own', () => {
  test('wins over the shared secret and the instanceId option, said once', async () => {
    const stub = await flowadminStub()
    const first = await start(stub, { ...OWN, enrolmentToken: stub.identity.token() })
    await until(() => first.kept() !== null)
    await first.close()
    const kept = first.kept()
    // A copy (a restore from backup) made readable by others: made this user's alone again.
    chmodSync(first.file, 0o644)
    const again = await start(stub, { instanceId: 'other-name' }, first.userDir)
    await until(() => stub.fleet.pollsOf('nr-1').length > 1)
    expect(stub.fleet.pollsOf('nr-1').at(-1)?.authorization).toBe(
      basic(kept?.clientId ?? '', kept?.clientSecret ?? ''),
    )
    expect(stub.fleet.pollsOf('other-name')).toEqual([])
    expect(again.mode()).toBe(0o600)
    expect(again.lines).toEqual([
      'fleet: this instance is "nr-1" as its credential says, not "other-name" (the instanceId option)',
    ])
  })

  test('rotated when a poll asks: the file replaced whole (0600), then the new secret used', async () => {
    const stub = await flowadminStub()
    const instance = await start(stub, { ...OWN, enrolmentToken: stub.identity.token() })
    await until(() => instance.kept() !== null && stub.fleet.pollsOf('nr-1').length > 0)
    const before = instance.kept()
    const inode = statSync(instance.file).ino
    stub.identity.askRotate('nr-1')
    // The held poll answers at the change, the next at once with the flag.
    stub.fleet.setDesired(desiredState('2'))
    await until(() => instance.kept()?.clientSecret !== before?.clientSecret)
    const after = instance.kept()
    expect(after).toEqual({ ...before, clientSecret: stub.identity.secretsOf('nr-1').secret })
    // Renamed over the old file, not written into it; no temporary file left.
    expect(statSync(instance.file).ino).not.toBe(inode)
    expect(instance.mode()).toBe(0o600)
    expect(readdirSync(instance.userDir).filter((name) => name.endsWith('.tmp'))).toEqual([])
    expect(stub.to('/fleet/instances/nr-1/credential')[0]?.authorization).toBe(
      basic(before?.clientId ?? '', before?.clientSecret ?? ''),
    )
    const asked = stub.received.length
    stub.fleet.setDesired(desiredState('3'))
    await until(() =>
      stub.received.slice(asked).some((request) => request.path === '/fleet/instances/nr-1/desired'),
    )
    const later = stub.received.slice(asked).filter((request) => request.path.startsWith('/fleet/'))
    expect(
      later.every(
        (request) => request.authorization === basic(after?.clientId ?? '', after?.clientSecret ?? ''),
      ),
    ).toBe(true)
    // The first use of the new secret ended the old one; one rotation for the version that asked.
    expect(stub.identity.secretsOf('nr-1').previous).toBeNull()
    expect(stub.to('/fleet/instances/nr-1/credential')).toHaveLength(1)
    expect(instance.lines).toContain(
      `this instance's credential at flowadmin at ${stub.url} is rotated: the new one is kept in ${instance.file}`,
    )
  })

  test('a rotation flowadmin fails is said once and tried again; a later one is made too', async () => {
    const stub = await flowadminStub()
    const instance = await start(stub, { ...OWN, enrolmentToken: stub.identity.token() })
    await until(() => instance.kept() !== null && stub.fleet.pollsOf('nr-1').length > 0)
    const first = instance.kept()?.clientSecret
    stub.identity.failRotations(2)
    stub.identity.askRotate('nr-1')
    stub.fleet.setDesired(desiredState('2'))
    await until(() => instance.kept()?.clientSecret !== first)
    expect(stub.to('/fleet/instances/nr-1/credential')).toHaveLength(3)
    expect(instance.lines.filter((line) => line.includes('rotate'))).toEqual([
      `flowadmin at ${stub.url} refused to rotate this instance's credential (HTTP 503 storage_unavailable: The store does not answer): it keeps the one it has; tried again`,
      `this instance's credential at flowadmin at ${stub.url} is rotated: the new one is kept in ${instance.file}`,
    ])
    // Asked again later, with the same desired state: rotated again.
    const second = instance.kept()?.clientSecret
    await until(() => stub.identity.secretsOf('nr-1').previous === null)
    stub.identity.askRotate('nr-1')
    stub.fleet.setDesired(desiredState('2', { prune: true }))
    await until(() => instance.kept()?.clientSecret !== second)
    expect(instance.kept()?.clientSecret).toBe(stub.identity.secretsOf('nr-1').secret)
    expect(stub.to('/fleet/instances/nr-1/credential')).toHaveLength(4)
  })

  test('revoked: one line, logins and tokens refused, Node-RED running, polls go on', async () => {
    const stub = await flowadminStub()
    const instance = await start(stub, { ...OWN, enrolmentToken: stub.identity.token() })
    await until(() => instance.kept() !== null && stub.fleet.pollsOf('nr-1').length > 0)
    const token = stub.issue('admin', '*')
    await expect(instance.settings.adminAuth.tokens(token)).resolves.toMatchObject({ username: 'admin' })
    // Revoked while a poll is held: the held poll answers at the change, the next ones are refused.
    await until(() => {
      const last = stub.fleet.pollsOf('nr-1').at(-1)
      return last?.headers['if-none-match'] !== undefined && last.answeredAt === 0
    })
    stub.identity.revoke('nr-1')
    stub.fleet.setDesired(desiredState('2'))
    const polled = stub.fleet.pollsOf('nr-1').length
    const reported = stub.to('/fleet/instances/nr-1/report').length
    await until(() => stub.fleet.pollsOf('nr-1').length >= polled + 3)
    // Its report of the state it applied is refused too.
    await until(() => stub.to('/fleet/instances/nr-1/report').length > reported)
    await expect(instance.settings.adminAuth.tokens(token)).resolves.toBeNull()
    await expect(instance.settings.adminAuth.authenticate('admin', 'pw')).resolves.toBeNull()
    expect(instance.lines.filter((line) => line.includes('revoked'))).toEqual([
      `this instance's credential was revoked or is unknown at flowadmin at ${stub.url}: enrol it again (see the README); logins are refused until then`,
    ])
    // Nor a refused report (its state changed with the new desired version): one line in all.
    expect(instance.lines.filter((line) => line.includes('HTTP 401'))).toEqual([])
  })

  test('the editor’s "Sign in with …" names its own client id and trades the code with its credential', async () => {
    const stub = await flowadminStub()
    const redirectUri = 'http://127.0.0.1:1880/auth/strategy/callback'
    stub.identity.refuseNext({ status: 503, body: { code: 'storage_unavailable' } })
    const instance = await start(stub, {
      ...OWN,
      enrolmentToken: stub.identity.token(),
      sso: { redirectUri },
    })
    const adminAuth = instance.settings.adminAuth as unknown as StrategyAdminAuth
    const Strategy = adminAuth.strategy.strategy
    const actions: Array<[string, unknown]> = []
    const run = (req: { query: Record<string, unknown>; session: Record<string, unknown> }) =>
      Object.assign(Object.create(new Strategy({}, () => null)), {
        redirect: (url: string) => actions.push(['redirect', url]),
        success: (user: unknown) => actions.push(['success', user]),
        error: (error: Error) => actions.push(['error', error.message]),
      }).authenticate(req)
    const session: Record<string, unknown> = {}
    // Not enrolled yet: no sign-in to start.
    run({ query: {}, session })
    expect(actions.shift()).toEqual([
      'error',
      'This instance is not enrolled at flowadmin yet: try again later',
    ])
    await until(() => instance.kept() !== null)
    const kept = instance.kept()
    run({ query: {}, session })
    const [action, location] = actions.shift() as [string, string]
    expect(action).toBe('redirect')
    const params = new URL(location).searchParams
    expect(params.get('client_id')).toBe(`${CLIENT_ID}/nr-1`)
    run({ query: { code: stub.code('admin'), state: params.get('state') }, session })
    await until(() => actions.length > 0)
    expect(actions[0]?.[0]).toBe('success')
    const exchange = stub.to('/auth/token').at(-1)
    expect(exchange?.authorization).toBe(basic(kept?.clientId ?? '', kept?.clientSecret ?? ''))
    expect(exchange?.form.client_id).toBe(`${CLIENT_ID}/nr-1`)
  })
})
