// Every instance its own identity, end to end: the built flowadmin in fleet mode and three real,
// stock Node-RED instances whose helper holds no shared secret, only an enrolment token each (in
// FLOWADMIN_ENROLMENT_TOKEN). Each enrols, keeps its credential in its userDir and acts as itself
// alone; one is revoked, one rotated; an instance set up with the shared secret as before still
// joins. One setup for the whole file: Node-RED processes cost a shared machine a lot.
import { readFile, stat } from 'node:fs/promises'
import * as path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type BuiltServer, runCliToEnd, startBuiltServer, useServerFolder } from './cli-process.js'
import {
  CLIENT_ID,
  eventually,
  fleetAdminAuth,
  HELPER,
  helperSettings,
  instanceToken,
  PASSWORD,
  SECRET,
} from './fleet-setup.js'
import { type NodeRedRun, startNodeRed, stopNodeReds } from './node-red-process.js'

const work = useServerFolder('fleet-enrol')
let flowadmin: BuiltServer
let adminToken: string
const runs = new Map<string, NodeRedRun>()
/** The enrolment token each instance was given. */
const enrolmentTokens = new Map<string, string>()
/** A token made to expire a minute after the start (the shortest flowadmin makes), never used before. */
let expiring: { token: string; expiresAt: number }

interface Credential {
  url: string
  instance: string
  resourceServer: string
  clientId: string
  clientSecret: string
  machine: string
}

interface Listed {
  id: string
  connected: boolean
  revoked: boolean
  enrolment: { at: string; by: string | null; rotatedAt: string | null; revokedAt: string | null } | null
}

/** A settings.js's parts for the helper in fleet mode with no shared secret; the trail too. */
function enrolledSettings(url: string, instanceId: string | null) {
  return {
    preamble: `
const flowadmin = require(${JSON.stringify(HELPER)})
const options = {
  url: ${JSON.stringify(url)},
  fleet: true,
  timeoutMs: 5000,
  audit: { delayMs: 0 },${instanceId === null ? '' : `\n  instanceId: ${JSON.stringify(instanceId)},`}
}
`,
    adminAuth: 'flowadmin.adminAuth(options)',
    httpAdminMiddleware: 'flowadmin.httpAdminMiddleware(options)',
    logging: `{ console: { level: 'info', metrics: false, audit: false }, flowadmin: flowadmin.auditLogger(options) }`,
  }
}

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`
const basicOf = (credential: Credential) => basic(credential.clientId, credential.clientSecret)

async function flowadminCall(method: string, pathname: string, body?: unknown) {
  const res = await fetch(`${flowadmin.url}${pathname}`, {
    method,
    headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await res.text()
  return { status: res.status, body: text === '' ? null : (JSON.parse(text) as unknown) }
}

/** A new enrolment token for the fleet's resource server. */
async function enrolmentToken(body: Record<string, unknown> = {}) {
  const made = await flowadminCall('POST', '/fleet/enrolments', { resourceServer: CLIENT_ID, ...body })
  expect(made.status).toBe(201)
  return made.body as { token: string; expiresAt: string }
}

const listed = async () => (await flowadminCall('GET', '/fleet/instances')).body as Listed[]
const credentialOf = async (name: string) =>
  JSON.parse(await readFile(path.join(work.dir, name, '.flowadmin-credential'), 'utf8')) as Credential

/** An instance's own calls with a credential, as a script holding it would make them. */
const pollAs = (id: string, authorization: string) =>
  fetch(`${flowadmin.url}/fleet/instances/${id}/desired`, { headers: { authorization } })
const reportAs = (id: string, authorization: string) =>
  fetch(`${flowadmin.url}/fleet/instances/${id}/report`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({
      sequence: Date.now(),
      nodeRedVersion: '4.1.15',
      modules: [],
      typesInUse: [],
      applied: null,
      failures: [],
    }),
  })
const trailAs = (instance: string, authorization: string) =>
  fetch(`${flowadmin.url}/audit/events`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify({
      events: [{ time: Date.now(), instance, actor: 'mallory', event: 'flows.set', address: null }],
    }),
  })
/** An editor's request to an instance's admin API with a bearer token: its status. */
const editorStatus = async (name: string, token: string) =>
  (
    await fetch(`${(runs.get(name) as NodeRedRun).url}/nodes`, {
      headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
    })
  ).status

/** Starts an instance in its own folder with an enrolment token (or the shared secret). */
async function startEnrolled(name: string, token: string, instanceId: string | null = null) {
  const run = await startNodeRed(path.join(work.dir, name), enrolledSettings(flowadmin.url, instanceId), {
    FLOWADMIN_ENROLMENT_TOKEN: token,
    FLOWADMIN_SECRET: '',
  })
  runs.set(name, run)
  return run
}

/** The helper's lines in an instance's output (its default log prefixes them). */
const helperLines = (run: NodeRedRun) =>
  `${run.stdout}\n${run.stderr}`.split('\n').filter((line) => line.includes('[flowadmin]'))

beforeAll(async () => {
  const flowadminDir = path.join(work.dir, 'flowadmin')
  const settingsFile = path.join(flowadminDir, 'settings.json')
  flowadmin = await startBuiltServer(settingsFile, {
    settings: {
      storage: 'sqlite',
      userDir: flowadminDir,
      auditLog: 'stdout',
      fleet: { modules: true, hold: 10 },
      adminAuth: { ...(await fleetAdminAuth()), clients: ['node-red-admin'] },
    },
  })
  // A busy machine may shed the first login (argon2): tried again a few times.
  for (let attempt = 0; adminToken === undefined; attempt++) {
    const res = await fetch(`${flowadmin.url}/auth/token`, {
      method: 'POST',
      body: new URLSearchParams({
        grant_type: 'password',
        client_id: 'node-red-admin',
        username: 'admin',
        password: PASSWORD,
        scope: '*',
      }),
    })
    if (res.status === 200) adminToken = ((await res.json()) as { access_token: string }).access_token
    else if (attempt === 10) throw new Error(`no admin token: HTTP ${res.status}`)
    else await new Promise((resolve) => setTimeout(resolve, 1000))
  }
  const short = await enrolmentToken({ expiresIn: 60 })
  expiring = { token: short.token, expiresAt: Date.parse(short.expiresAt) }
  // nr-1 and nr-3: the token names the id; nr-2: the helper's instanceId option asks for it.
  // nr-3's token comes from the command beside the running server, as a provisioning script's.
  enrolmentTokens.set('nr-1', (await enrolmentToken({ instance: 'nr-1' })).token)
  enrolmentTokens.set('nr-2', (await enrolmentToken()).token)
  const made = await runCliToEnd([
    'instances',
    'enrol',
    '--resource-server',
    CLIENT_ID,
    '--instance',
    'nr-3',
    '--settings',
    settingsFile,
  ])
  expect(made.code, made.stderr).toBe(0)
  enrolmentTokens.set('nr-3', made.stdout.trim())
  await Promise.all([
    startEnrolled('nr-1', enrolmentTokens.get('nr-1') as string),
    startEnrolled('nr-2', enrolmentTokens.get('nr-2') as string, 'nr-2'),
    startEnrolled('nr-3', enrolmentTokens.get('nr-3') as string),
  ])
}, 180_000)

afterAll(async () => {
  await stopNodeReds()
})

describe('three Node-RED instances enrolled with a token each', () => {
  it('each joins under its own id, its credential kept 0600 in its userDir, the token nowhere', async () => {
    const list = await eventually(listed, (all) =>
      ['nr-1', 'nr-2', 'nr-3'].every((id) => all.find((each) => each.id === id)?.connected),
    )
    expect(list.map((each) => each.id).sort()).toEqual(['nr-1', 'nr-2', 'nr-3'])
    for (const name of ['nr-1', 'nr-2', 'nr-3']) {
      const credential = await credentialOf(name)
      expect(credential).toMatchObject({
        url: flowadmin.url,
        instance: name,
        resourceServer: CLIENT_ID,
        clientId: `${CLIENT_ID}/${name}`,
      })
      expect(credential.clientSecret).toMatch(/^fai_/)
      const file = path.join(work.dir, name, '.flowadmin-credential')
      expect((await stat(file)).mode & 0o777).toBe(0o600)
      // The command line's token is nobody's.
      expect(list.find((each) => each.id === name)).toMatchObject({
        revoked: false,
        enrolment: { by: name === 'nr-3' ? null : 'admin' },
      })
      const run = runs.get(name) as NodeRedRun
      const token = enrolmentTokens.get(name) as string
      expect(`${run.stdout}${run.stderr}`).not.toContain(token)
      expect(helperLines(run)).toContain(
        `[flowadmin] enrolment: this instance is enrolled at flowadmin at ${flowadmin.url} as "${name}"; its credential is kept in ${file} and the enrolment token is no longer needed`,
      )
    }
  })

  it("nr-2's credential polling or reporting as nr-1 is refused and audited; its trail events stay its own", async () => {
    const nr2 = basicOf(await credentialOf('nr-2'))
    const poll = await pollAs('nr-1', nr2)
    expect(poll.status).toBe(403)
    expect(await poll.json()).toMatchObject({ code: 'instance_mismatch' })
    const report = await reportAs('nr-1', nr2)
    expect(report.status).toBe(403)
    expect(await report.json()).toMatchObject({ code: 'instance_mismatch' })
    const audited = await eventually(
      async () => flowadmin.run.stdout.split('\n').filter((line) => line.includes('fleet.instance_mismatch')),
      (lines) => lines.length >= 2,
    )
    expect(audited.length).toBeGreaterThanOrEqual(2)
    // Trail events it says are nr-1's are refused whole and audited; none is filed anywhere.
    const trail = await trailAs('nr-1', nr2)
    expect(trail.status).toBe(403)
    expect(await trail.json()).toMatchObject({ code: 'instance_mismatch' })
    expect(
      await eventually(
        async () =>
          flowadmin.run.stdout.split('\n').filter((line) => line.includes('fleet.instance_mismatch')).length,
        (count) => count >= 3,
      ),
    ).toBeGreaterThanOrEqual(3)
    const filed = async (instance: string) =>
      (
        (await flowadminCall('GET', `/audit?instance=${CLIENT_ID}/${instance}&actor=mallory`)).body as {
          events: unknown[]
        }
      ).events.length
    expect(await filed('nr-2')).toBe(0)
    expect(await filed('nr-1')).toBe(0)
    // Its own events it still files.
    expect((await trailAs('nr-2', nr2)).status).toBe(200)
    expect(
      await eventually(
        () => filed('nr-2'),
        (count) => count === 1,
      ),
    ).toBe(1)
  })

  it("an editor's token from nr-1 is inactive at nr-2", async () => {
    const token = await instanceToken(runs.get('nr-1') as NodeRedRun)
    expect(await editorStatus('nr-1', token)).toBe(200)
    expect(await editorStatus('nr-2', token)).toBe(401)
    // nr-1's own trail events (a deploy) reach flowadmin with its credential, under its id.
    const deploy = await fetch(`${(runs.get('nr-1') as NodeRedRun).url}/flows`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${token}`,
        'content-type': 'application/json',
        'Node-RED-Deployment-Type': 'full',
      },
      body: JSON.stringify([{ id: 'tab1', type: 'tab', label: 'Flow 1' }]),
    })
    expect(deploy.status).toBe(204)
    const deploys = await eventually(
      async () =>
        (
          (await flowadminCall('GET', `/audit?instance=${CLIENT_ID}/nr-1&event=flows.set`)).body as {
            events: Array<{ instance: string; actor: string }>
          }
        ).events,
      (events) => events.length > 0,
    )
    expect(deploys).toMatchObject([{ instance: `${CLIENT_ID}/nr-1`, actor: 'admin' }])
  })

  it('revoking nr-3 fails its token checks, polls and reports at once; nr-1 and nr-2 keep working', async () => {
    const tokens = {
      'nr-1': await instanceToken(runs.get('nr-1') as NodeRedRun),
      'nr-2': await instanceToken(runs.get('nr-2') as NodeRedRun),
      'nr-3': await instanceToken(runs.get('nr-3') as NodeRedRun),
    }
    expect(await editorStatus('nr-3', tokens['nr-3'])).toBe(200)
    const nr3 = basicOf(await credentialOf('nr-3'))
    expect((await flowadminCall('POST', '/fleet/instances/nr-3/revoke')).status).toBe(204)
    // At once: no wait between the revocation and these.
    expect(await editorStatus('nr-3', tokens['nr-3'])).toBe(401)
    expect((await pollAs('nr-3', nr3)).status).toBe(401)
    expect((await reportAs('nr-3', nr3)).status).toBe(401)
    for (const name of ['nr-1', 'nr-2'] as const) {
      expect(await editorStatus(name, tokens[name])).toBe(200)
      expect((await pollAs(name, basicOf(await credentialOf(name)))).status).toBe(200)
    }
    // Node-RED goes on, saying once what happened; the fleet lists nr-3 as revoked.
    const run = runs.get('nr-3') as NodeRedRun
    const said = `[flowadmin] this instance's credential was revoked or is unknown at flowadmin at ${flowadmin.url}: enrol it again (see the README); logins are refused until then`
    await eventually(
      async () => helperLines(run),
      (lines) => lines.includes(said),
    )
    expect(helperLines(run).filter((line) => line.includes('revoked'))).toEqual([said])
    expect(run.child.exitCode).toBeNull()
    expect((await listed()).find((each) => each.id === 'nr-3')).toMatchObject({ revoked: true })
  })

  it('rotating nr-1 keeps it in the fleet: the new secret kept and used, the old one refused', async () => {
    const before = await credentialOf('nr-1')
    expect((await flowadminCall('POST', '/fleet/instances/nr-1/rotate')).status).toBe(204)
    const after = await eventually(
      () => credentialOf('nr-1'),
      (credential) => credential.clientSecret !== before.clientSecret,
    )
    expect(after).toEqual({ ...before, clientSecret: expect.stringMatching(/^fai_/) })
    // The old secret stops once the new one is used (by the instance's next poll).
    const old = await eventually(
      async () => (await pollAs('nr-1', basicOf(before))).status,
      (status) => status === 401,
    )
    expect(old).toBe(401)
    const list = await eventually(listed, (all) => {
      const nr1 = all.find((each) => each.id === 'nr-1')
      return nr1?.connected === true && nr1.enrolment?.rotatedAt !== null
    })
    expect(list.find((each) => each.id === 'nr-1')).toMatchObject({ connected: true, revoked: false })
    const token = await instanceToken(runs.get('nr-1') as NodeRedRun)
    expect(await editorStatus('nr-1', token)).toBe(200)
  })

  it('an enrolment token used twice is refused, at a fresh Node-RED too; so is one past its expiry', async () => {
    const spent = enrolmentTokens.get('nr-2') as string
    const again = await fetch(`${flowadmin.url}/fleet/enrol`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: spent }),
    })
    expect(again.status).toBe(401)
    expect(await again.json()).toMatchObject({ code: 'invalid_enrolment' })
    const copy = await startEnrolled('copy', spent)
    const said = `[flowadmin] enrolment: flowadmin at ${flowadmin.url} refused this instance's enrolment (HTTP 401 invalid_enrolment`
    await eventually(
      async () => helperLines(copy),
      (lines) => lines.some((line) => line.startsWith(said)),
    )
    expect(`${copy.stdout}${copy.stderr}`).not.toContain(spent)
    await copy.stop()
    // The expiring token: waited for (never used before), then refused as an unknown one.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiring.expiresAt - Date.now() + 1000)))
    const late = await fetch(`${flowadmin.url}/fleet/enrol`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ token: expiring.token }),
    })
    expect(late.status).toBe(401)
    expect(await late.json()).toMatchObject({ code: 'invalid_enrolment' })
  }, 120_000)

  it('the shared-secret set-up of today still joins and checks logins, and moves to a credential of its own', async () => {
    const run = await startNodeRed(
      path.join(work.dir, 'shared-1'),
      helperSettings(flowadmin.url, 'shared-1'),
      {
        FLOWADMIN_SECRET: SECRET,
      },
    )
    runs.set('shared-1', run)
    const list = await eventually(listed, (all) =>
      all.some((each) => each.id === 'shared-1' && each.connected),
    )
    expect(list.find((each) => each.id === 'shared-1')).toMatchObject({ connected: true, enrolment: null })
    const token = await instanceToken(run)
    expect(await editorStatus('shared-1', token)).toBe(200)
    await expect(stat(path.join(work.dir, 'shared-1', '.flowadmin-credential'))).rejects.toThrow()

    // Moved off the shared secret: restarted with a token naming its id, the shared options kept.
    const token2 = (await enrolmentToken({ instance: 'shared-1' })).token
    await run.stop()
    const moved = await startNodeRed(
      path.join(work.dir, 'shared-1'),
      helperSettings(flowadmin.url, 'shared-1'),
      {
        FLOWADMIN_SECRET: SECRET,
        FLOWADMIN_ENROLMENT_TOKEN: token2,
      },
    )
    runs.set('shared-1', moved)
    const enrolled = await eventually(listed, (all) =>
      all.some((each) => each.id === 'shared-1' && each.connected && each.enrolment !== null),
    )
    expect(enrolled.find((each) => each.id === 'shared-1')).toMatchObject({ revoked: false })
    const credential = await credentialOf('shared-1')
    expect(credential).toMatchObject({ instance: 'shared-1', clientId: `${CLIENT_ID}/shared-1` })
    expect((await pollAs('shared-1', basicOf(credential))).status).toBe(200)
    // The shared secret may no longer act as it.
    expect((await pollAs('shared-1', basic(CLIENT_ID, SECRET))).status).toBe(403)
    expect(await editorStatus('shared-1', await instanceToken(moved))).toBe(200)
  })
})
