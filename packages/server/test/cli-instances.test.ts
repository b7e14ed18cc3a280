// `flowadmin instances`, from the built command beside the built server sharing its SQLite file: an
// operator enrols an instance, the instance exchanges the token for its own credential, and the
// operator lists, rotates and revokes it. The server warns once about the shared secret.
import { createHash } from 'node:crypto'
import * as argon2 from 'argon2'
import { beforeAll, describe, expect, it } from 'vitest'
import { logEntries, runCliToEnd, useUserDir, writeSettings } from './cli-process.js'

const dir = useUserDir('cli-instances')
const SHARED = 'shared-fleet-secret'
const digest = (text: string) => createHash('sha256').update(text).digest('hex')
let users: object[]

beforeAll(async () => {
  const password = await argon2.hash('admin-pw', { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2 })
  users = [{ username: 'admin', password, permissions: '*' }]
})

const settings = () => ({
  fleet: { modules: true },
  adminAuth: {
    type: 'credentials',
    users,
    resourceServers: [
      { id: 'fleet', secret: `sha256:${digest(SHARED)}`, fleet: true },
      { id: 'plain', secret: `sha256:${digest('plain')}` },
    ],
  },
})

const instances = (...args: string[]) => runCliToEnd(['instances', ...args, '--settings', dir.settingsFile])
const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`

describe('flowadmin instances', () => {
  it('enrols an instance that then acts with its own credential; lists, rotates and revokes it', async () => {
    const server = await dir.start({ settings: settings() })
    const warnings = logEntries(server.run.stderr).filter((entry) => entry.level === 'warn')
    expect(warnings.filter((entry) => entry.msg.includes('docs/fleet.md#enrolment'))).toHaveLength(1)
    expect(warnings.some((entry) => entry.msg.includes('resource server fleet'))).toBe(true)

    const enrolled = await instances(
      'enrol',
      '--resource-server',
      'fleet',
      '--instance',
      'nr-1',
      '--expires',
      '10m',
    )
    expect(enrolled.code).toBe(0)
    expect(enrolled.stdout).toMatch(/^fae_[A-Za-z0-9_-]{43}\n$/)
    expect(enrolled.stderr).toMatch(/^Enrolment token \S+ for one instance as nr-1 of fleet, until \S+\.\n/)
    const token = enrolled.stdout.trim()

    const res = await fetch(`${server.url}/fleet/enrol`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token, nodeRedVersion: '4.1.15' }),
    })
    expect(res.status).toBe(201)
    const credential = (await res.json()) as { clientId: string; clientSecret: string }
    expect(credential.clientId).toBe('fleet/nr-1')
    const poll = () =>
      fetch(`${server.url}/fleet/instances/nr-1/desired`, {
        headers: { authorization: basic(credential.clientId, credential.clientSecret) },
      })
    expect((await poll()).status).toBe(200)
    expect(
      (
        await fetch(`${server.url}/fleet/enrol`, {
          method: 'POST',
          body: JSON.stringify({ token }),
          headers: { 'content-type': 'application/json' },
        })
      ).status,
    ).toBe(401)

    const listed = await instances('list', '--json')
    expect(listed.code).toBe(0)
    expect(JSON.parse(listed.stdout)).toMatchObject([
      {
        id: 'nr-1',
        resourceServer: 'fleet',
        revoked: false,
        enrolment: { by: null, rotatedAt: null, revokedAt: null },
      },
    ])
    const table = await instances('list')
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+RESOURCE SERVER\s+CONNECTED\s+ENROLLED/)

    expect(await instances('rotate', 'nr-1')).toEqual({
      code: 0,
      stdout: '',
      stderr: 'Instance nr-1 takes a new secret at its next poll.\n',
    })
    expect(await (await poll()).json()).toMatchObject({ rotate: true })
    expect((await instances('revoke', 'nr-1')).code).toBe(0)
    // The server takes a proven credential for a second: the command's revocation (another
    // process) is refused there within it.
    for (const deadline = Date.now() + 10_000; (await poll()).status !== 401 && Date.now() < deadline; )
      await new Promise((resolve) => setTimeout(resolve, 50))
    const refused = await poll()
    expect(refused.status).toBe(401)
    expect(await refused.json()).toMatchObject({ error: 'invalid_client' })
    expect((await instances('revoke', 'nr-9')).code).toBe(1)
    await server.stop()
  })

  it('refuses what it cannot do, saying why', async () => {
    await writeSettings(dir.settingsFile, settings())
    const missing = await instances('enrol')
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('enrol needs --resource-server ID')
    const plain = await instances('enrol', '--resource-server', 'plain')
    expect(plain.code).toBe(2)
    expect(plain.stderr).toContain('resourceServer: no resource server marked for the fleet')
    const many = await instances('enrol', '--resource-server', 'fleet', '--uses', '2', '--instance', 'nr-1')
    expect(many.code).toBe(2)
    expect(many.stderr).toContain('instance: a token that names its instance enrols one instance')
    await writeSettings(dir.settingsFile, { ...settings(), fleet: undefined })
    const off = await instances('list')
    expect(off.code).toBe(2)
    expect(off.stderr).toContain('fleet mode is off')
  })
})
