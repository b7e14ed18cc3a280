// Installing and removing node modules over the API with the real npm, against a registry the test
// serves itself: what the client sees, what userDir holds afterwards, and what the log says.
import { createHash } from 'node:crypto'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { waitFor } from '@flowadmin/testkit'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { type RunningServer, type SettingsInput, startServer } from '../src/index.js'
import { writeNodeModulePackage } from './ecosystem.js'
import { type LocalRegistry, startLocalRegistry } from './local-registry.js'
import { type CapturedLog, captureLog } from './log-capture.js'

const SHOUT = { name: 'node-red-contrib-shout', version: '1.2.0', sets: { shout: ['shout'] } }
const SHOUT_2 = { ...SHOUT, version: '2.0.0' }
const TOOLS = {
  name: '@acme/node-red-tools',
  version: '0.3.1',
  sets: { upper: ['upper-case'], lower: ['lower-case'] },
}
const PLAIN = { name: 'left-pad-plain', version: '1.0.0' }
/** Where the install script of SCRIPTED leaves a mark when it runs. */
const SCRIPT_MARK = path.join(tmpdir(), `flowadmin-script-ran-${process.pid}-${Date.now()}`)
const SCRIPTED = {
  name: 'node-red-contrib-scripted',
  version: '1.0.0',
  sets: { scripted: ['scripted'] },
  fields: {
    scripts: {
      preinstall: `node -e "require('fs').writeFileSync(${JSON.stringify(SCRIPT_MARK).replace(/"/g, "'")}, '')"`,
    },
  },
}
const SLOW = { name: 'node-red-contrib-slow', version: '1.0.0', sets: { slow: ['slow'] } }
/** A node module that depends on a package the registry does not have. */
const NEEDS_GONE = {
  name: 'node-red-contrib-needs-gone',
  version: '1.0.0',
  sets: { needs: ['needs'] },
  fields: { dependencies: { 'gone-dependency': '^1.0.0' } },
}

let registry: LocalRegistry
let userDir: string
let log: CapturedLog
let audit: string[]
const running: RunningServer[] = []

beforeAll(async () => {
  registry = await startLocalRegistry()
  for (const fixture of [SHOUT, SHOUT_2, TOOLS, PLAIN, SCRIPTED, SLOW, NEEDS_GONE]) {
    await registry.publish(fixture)
  }
  registry.hang(SLOW.name)
}, 120_000)
afterAll(() => registry.close())
beforeEach(async () => {
  userDir = await mkdtemp(path.join(tmpdir(), 'flowadmin-palette-'))
  log = captureLog()
  audit = []
})
afterEach(async () => {
  for (const server of running.splice(0)) await server.close()
  await rm(userDir, { recursive: true, force: true })
})

async function start(
  palette: Record<string, unknown> = {},
  extra: SettingsInput = {},
): Promise<RunningServer> {
  const server = await startServer({
    port: 0,
    userDir,
    settings: {
      storage: 'memory',
      externalModules: { palette: { registry: registry.url, ...palette } },
      ...extra,
    } as SettingsInput,
    stdout: (line) => audit.push(line),
    logger: log.logger,
  })
  running.push(server)
  return server
}

const post = (server: RunningServer, body: unknown) =>
  fetch(`${server.url}/nodes`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  })
const remove = (server: RunningServer, module: string) =>
  fetch(`${server.url}/nodes/${module}`, { method: 'DELETE' })

/** Every file under userDir with a hash of its content, except the audit and database files. */
async function snapshot(dir = userDir): Promise<string[]> {
  const files: string[] = []
  const walk = async (folder: string) => {
    for (const entry of await readdir(folder, { withFileTypes: true })) {
      const full = path.join(folder, entry.name)
      if (entry.isDirectory()) await walk(full)
      else
        files.push(
          `${path.relative(dir, full)} ${createHash('sha1')
            .update(await readFile(full))
            .digest('hex')}`,
        )
    }
  }
  await walk(dir)
  return files.sort()
}

const dependencies = async () =>
  JSON.parse(await readFile(path.join(userDir, 'package.json'), 'utf8')).dependencies as Record<
    string,
    string
  >

const shoutView = (version: string) => ({
  name: SHOUT.name,
  version,
  nodes: [
    {
      id: `${SHOUT.name}/shout`,
      name: 'shout',
      types: ['shout'],
      enabled: true,
      loaded: true,
      module: SHOUT.name,
      version,
    },
  ],
})

describe('POST /nodes and DELETE /nodes/:module with npm and a local registry', () => {
  it('installs a module (a range), lists it, records it in package.json, audits it; removes it again', async () => {
    const server = await start()
    const installed = await post(server, { module: SHOUT.name, version: '^1.0.0' })
    expect(installed.status).toBe(200)
    expect(await installed.json()).toEqual(shoutView('1.2.0'))
    // npm's output goes to the server log.
    expect(log.entries()).toContainEqual(
      expect.objectContaining({
        level: 'info',
        msg: `npm install ${SHOUT.name}@^1.0.0 succeeded`,
        npm: expect.arrayContaining([expect.any(String)]),
      }),
    )
    expect((await (await fetch(`${server.url}/nodes`)).json()).map((set: { id: string }) => set.id)).toEqual([
      `${SHOUT.name}/shout`,
    ])
    expect(await dependencies()).toEqual({ [SHOUT.name]: '^1.2.0' })
    expect(
      JSON.parse(await readFile(path.join(userDir, 'node_modules', SHOUT.name, 'package.json'), 'utf8'))
        .version,
    ).toBe('1.2.0')

    const removed = await remove(server, SHOUT.name)
    expect(removed.status).toBe(204)
    expect(await removed.text()).toBe('')
    expect((await fetch(`${server.url}/nodes/${SHOUT.name}`)).status).toBe(404)
    expect((await dependencies()) ?? {}).toEqual({})
    expect(await readdir(path.join(userDir, 'node_modules')).catch(() => [])).not.toContain(SHOUT.name)
    expect((await readdir(userDir)).filter((entry) => entry.startsWith('.flowadmin-staging'))).toEqual([])

    const events = audit.map((line) => JSON.parse(line))
    expect(events.filter((event) => event.event.startsWith('module.'))).toEqual([
      expect.objectContaining({
        event: 'module.installed',
        module: SHOUT.name,
        version: '1.2.0',
        address: '127.0.0.1',
      }),
      expect.objectContaining({
        event: 'module.removed',
        module: SHOUT.name,
        version: '1.2.0',
        address: '127.0.0.1',
      }),
    ])
  })

  it('installs the newest without a version, a scoped module, and keeps hand-copied modules', async () => {
    await writeNodeModulePackage(
      path.join(userDir, 'node_modules', 'by-hand'),
      { name: 'by-hand', version: '1.0.0' },
      { hand: ['hand'] },
    )
    const server = await start()
    const newest = await post(server, { module: SHOUT.name })
    expect(await newest.json()).toEqual(shoutView('2.0.0'))
    const scoped = await post(server, { module: TOOLS.name, version: '0.3.1' })
    expect(scoped.status).toBe(200)
    expect(
      (await scoped.json()).nodes.map((set: { id: string; loaded: boolean }) => [set.id, set.loaded]),
    ).toEqual([
      [`${TOOLS.name}/upper`, true],
      [`${TOOLS.name}/lower`, true],
    ])
    const names = (await (await fetch(`${server.url}/nodes`)).json()).map(
      (set: { module: string }) => set.module,
    )
    expect([...new Set(names)]).toEqual([TOOLS.name, 'by-hand', SHOUT.name])
    expect(await readFile(path.join(userDir, 'node_modules', 'by-hand', 'hand.js'), 'utf8')).toContain('hand')
  })

  it('installs from a tarball url', async () => {
    const server = await start()
    const res = await post(server, { module: SHOUT.name, url: `${registry.url}-/${SHOUT.name}-1.2.0.tgz` })
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual(shoutView('1.2.0'))
  })

  it('reads the registry from userDir/.npmrc when the setting is absent', async () => {
    await writeFile(path.join(userDir, '.npmrc'), `registry=${registry.url}\n`)
    const server = await start({ registry: undefined })
    const res = await post(server, { module: SHOUT.name, version: '1.2.0' })
    expect(res.status).toBe(200)
    expect(await readFile(path.join(userDir, '.npmrc'), 'utf8')).toBe(`registry=${registry.url}\n`)
  })

  it('keeps a reinstalled module’s stored state; DELETE is refused while the flows use its types', async () => {
    const server = await start()
    expect((await post(server, { module: SHOUT.name, version: '1.2.0' })).status).toBe(200)
    const put = await fetch(`${server.url}/nodes/${SHOUT.name}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{"enabled":false}',
    })
    expect(put.status).toBe(200)
    const upgraded = await post(server, { module: SHOUT.name, version: '2.0.0' })
    expect((await upgraded.json()).nodes[0]).toMatchObject({ enabled: false, version: '2.0.0' })

    await writeFile(path.join(userDir, 'flows.json'), JSON.stringify([{ id: 'n1', type: 'shout' }]))
    const before = await snapshot()
    const refused = await remove(server, SHOUT.name)
    expect(refused.status).toBe(400)
    expect(await refused.json()).toEqual({
      code: 'type_in_use',
      message: 'Type in use: shout',
      types: ['shout'],
    })
    expect(await snapshot()).toEqual(before)
    expect((await remove(server, 'node-red-contrib-never-installed')).status).toBe(404)
  })
})

describe('hostile and refused installs: the documented error, and userDir exactly as it was', () => {
  /** Asserts the answer, that userDir did not change, and that the registry was not asked. */
  async function refused(
    server: RunningServer,
    body: unknown,
    status: number,
    expected: Record<string, unknown>,
    fetched = false,
  ) {
    const before = await snapshot()
    const asked = registry.requests.length
    const res = await post(server, body)
    expect(res.status, JSON.stringify(body)).toBe(status)
    const answer = await res.json()
    expect(answer, JSON.stringify(body)).toEqual(expected)
    expect(JSON.stringify(answer)).not.toContain(userDir)
    expect(await snapshot(), JSON.stringify(body)).toEqual(before)
    if (!fetched) expect(registry.requests.slice(asked), JSON.stringify(body)).toEqual([])
    return answer
  }
  const invalid = (message: string) => ({ code: 'invalid_request', message })

  beforeEach(async () => {
    // Something installed first, so there is a package.json, a lockfile and node_modules to keep.
    const server = await start()
    expect((await post(server, { module: SHOUT.name, version: '1.2.0' })).status).toBe(200)
    await server.close()
    running.splice(0)
  })

  it('names that are not npm package names, and specs that are not names', async () => {
    const server = await start()
    for (const module of [
      '../../etc',
      '..',
      'a/../b',
      '-rf',
      '--registry=http://evil.example',
      'file:../x',
      'git+https://github.com/x/y.git',
      'github:x/y',
      '/abs/path',
      'https://evil.example/x.tgz',
      'UPPER CASE',
      'x y',
      '@scope/../x',
      'node-red-contrib-shout@1.2.0',
      '.hidden',
    ]) {
      await refused(server, { module }, 400, invalid(`Invalid module name: ${module}`))
    }
    await refused(server, { module: '' }, 400, invalid('Invalid field: module must not be empty'))
    await refused(server, { module: 42 }, 400, invalid('Invalid field: module must be a string'))
    await refused(server, '{"module":', 400, expect.objectContaining({ code: 'invalid_request' }))
  })

  it('DELETE of names that are not installed modules: 404, nothing removed, npm not run', async () => {
    const server = await start()
    const before = await snapshot()
    const loggedBefore = log.lines.length
    for (const name of [
      '..%2F..%2Fetc',
      '-rf',
      '--global',
      '%2E%2E',
      'node-red-contrib-shoutx',
      '@acme%2F..',
    ]) {
      const res = await remove(server, name)
      expect(res.status, name).toBe(404)
      expect(await res.text()).toBe('')
    }
    expect(await snapshot()).toEqual(before)
    expect(log.lines.slice(loggedBefore).filter((line) => line.includes('npm'))).toEqual([])
  })

  it('versions that are not semver ranges', async () => {
    const server = await start()
    for (const version of [
      'latest',
      'file:../x',
      '--ignore-scripts=false',
      '-1',
      'git+ssh://x',
      '1.2.3 && rm -rf /',
      '../1',
    ]) {
      await refused(
        server,
        { module: SHOUT.name, version },
        400,
        invalid('Invalid version: use a semver version or range such as 1.2.3 or ^1.2'),
      )
    }
    await refused(
      server,
      { module: SHOUT.name, version: '1.2.0', url: `${registry.url}x.tgz` },
      400,
      invalid('Invalid request: give a version or a url, not both'),
    )
  })

  it('urls that are not http(s) tarball URLs', async () => {
    const server = await start()
    for (const url of [
      'file:///etc/passwd',
      'git+ssh://git@example.com/x.git',
      'github:x/y',
      '../x.tgz',
      '-x',
      'ftp://example.com/x.tgz',
    ]) {
      await refused(
        server,
        { module: SHOUT.name, url },
        400,
        invalid('Invalid url: use an http or https URL of a tarball'),
      )
    }
    await refused(
      server,
      { module: SHOUT.name, url: 'https://user:secret@example.com/x.tgz' },
      400,
      invalid('Invalid url: credentials in a URL are not accepted'),
    )
  })

  it('the policy: allowInstall, allowList and denyList with patterns and ranges, decided before any fetch', async () => {
    const off = await start({ allowInstall: false })
    await refused(off, { module: TOOLS.name }, 400, {
      code: 'module_not_allowed',
      message: 'Installing modules is not allowed',
    })
    expect((await remove(off, SHOUT.name)).status).toBe(400)
    await off.close()

    const listed = await start({
      allowList: ['node-red-contrib-*', '@acme/*@<0.3'],
      denyList: ['node-red-contrib-shout@>=2'],
    })
    await refused(listed, { module: PLAIN.name }, 400, {
      code: 'module_not_allowed',
      message: `${PLAIN.name} is not in the allowList`,
    })
    await refused(listed, { module: TOOLS.name, version: '0.3.1' }, 400, {
      code: 'module_not_allowed',
      message: `${TOOLS.name}@0.3.1 is not in the allowList`,
    })
    await refused(listed, { module: SHOUT.name, version: '2.0.0' }, 400, {
      code: 'module_not_allowed',
      message: `${SHOUT.name}@2.0.0 is in the denyList`,
    })
    // Without a version the newest could be a denied one: refused before asking the registry.
    await refused(listed, { module: SHOUT.name }, 400, {
      code: 'module_not_allowed',
      message: `${SHOUT.name} is in the denyList`,
    })
    expect((await post(listed, { module: SHOUT.name, version: '<2' })).status).toBe(200)
  })

  it('npm failures: an unknown package, a plain package, a tarball of another module', async () => {
    const server = await start()
    await refused(
      server,
      { module: 'node-red-contrib-not-published' },
      400,
      {
        code: 'install_failed',
        message: `module "node-red-contrib-not-published" not found in the registry ${registry.url}; nothing was changed`,
      },
      true,
    )
    expect(log.entries()).toContainEqual(
      expect.objectContaining({ level: 'warn', npm: expect.arrayContaining([expect.any(String)]) }),
    )
    await refused(
      server,
      { module: PLAIN.name },
      400,
      { code: 'install_failed', message: `${PLAIN.name} is not a node module` },
      true,
    )
    await refused(
      server,
      { module: TOOLS.name, url: `${registry.url}-/${SHOUT.name}-2.0.0.tgz` },
      400,
      { code: 'install_failed', message: `the tarball is not the node module ${TOOLS.name}` },
      true,
    )
  })

  it('what the registry does not have, said in words: a module, a dependency, a version, a tarball', async () => {
    const server = await start()
    const failure = (message: string) => ({
      code: 'install_failed',
      message: `${message}; nothing was changed`,
    })
    await refused(
      server,
      { module: '@acme/not-published' },
      400,
      failure(`module "@acme/not-published" not found in the registry ${registry.url}`),
      true,
    )
    await refused(
      server,
      { module: NEEDS_GONE.name },
      400,
      failure(
        `module "${NEEDS_GONE.name}" needs "gone-dependency", which is not found in the registry ${registry.url}`,
      ),
      true,
    )
    await refused(
      server,
      { module: SHOUT.name, version: '^9.0.0' },
      400,
      failure(`no version of module "${SHOUT.name}" matches ^9.0.0 in the registry ${registry.url}`),
      true,
    )
    const missing = `${registry.url}-/${SHOUT.name}-9.9.9.tgz`
    await refused(
      server,
      { module: SHOUT.name, url: missing },
      400,
      failure(`no tarball at ${missing}`),
      true,
    )
  })

  it('install scripts do not run unless allowScripts is set', async () => {
    const server = await start()
    expect((await post(server, { module: SCRIPTED.name })).status).toBe(200)
    expect(await stat(SCRIPT_MARK).catch(() => null)).toBeNull()
    expect((await remove(server, SCRIPTED.name)).status).toBe(204)
    await server.close()
    const allowing = await start({ allowScripts: true })
    expect((await post(allowing, { module: SCRIPTED.name })).status).toBe(200)
    expect(await stat(SCRIPT_MARK).catch(() => null)).not.toBeNull()
    await rm(SCRIPT_MARK, { force: true })
  })

  it('past the time limit: 504 install_timeout, npm stopped, nothing changed; a second request waits, then 409 busy', async () => {
    const server = await start({ timeout: 10, wait: 1 })
    const before = await snapshot()
    const asked = registry.requestsFor(SLOW.name).length
    const slow = post(server, { module: SLOW.name })
    // npm asking the registry for it means the first install holds the queue.
    await waitFor(
      () => registry.requestsFor(SLOW.name).length > asked,
      `npm to ask the registry for ${SLOW.name}`,
    )
    const second = await post(server, { module: TOOLS.name })
    expect(second.status).toBe(409)
    expect(await second.json()).toEqual({
      code: 'busy',
      message: 'Another module is being installed or removed; try again later',
    })
    const timedOut = await slow
    expect(timedOut.status).toBe(504)
    expect(await timedOut.json()).toEqual({
      code: 'install_timeout',
      message: 'The package manager ran past its time limit; nothing was changed',
    })
    expect(await snapshot()).toEqual(before)
    expect(log.said()).toContainEqual(
      expect.stringMatching(/^warn: npm install ran past 10000 ms and was stopped/),
    )
    // The queue is free again.
    expect((await post(server, { module: TOOLS.name })).status).toBe(200)
  }, 60_000)
})

describe('uploading a module tarball (multipart)', () => {
  const upload = (server: RunningServer, bytes: Uint8Array<ArrayBuffer>, field = 'tarball') => {
    const form = new FormData()
    form.append(field, new Blob([bytes]), 'module.tgz')
    return fetch(`${server.url}/nodes`, { method: 'POST', body: form })
  }
  const tarball = async (name: string, version: string) =>
    new Uint8Array(
      await (await fetch(`${registry.url}-/${name.replace('/', '-')}-${version}.tgz`)).arrayBuffer(),
    )

  it('is refused unless allowUpload is set, and userDir stays as it was', async () => {
    const server = await start()
    const before = await snapshot()
    const res = await upload(server, await tarball(SHOUT.name, '1.2.0'))
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({
      code: 'module_not_allowed',
      message: 'Uploading modules is not allowed',
    })
    expect(await snapshot()).toEqual(before)
  })

  it('installs an uploaded node module; a later install keeps it; bad uploads change nothing', async () => {
    const server = await start({ allowUpload: true, denyList: ['@acme/*'] })
    const res = await upload(server, await tarball(SHOUT.name, '2.0.0'))
    expect(res.status).toBe(200)
    expect(await res.json()).toEqual(shoutView('2.0.0'))
    expect((await post(server, { module: SCRIPTED.name })).status).toBe(200)
    expect(existsSync(path.join(userDir, 'node_modules', SHOUT.name, 'shout.js'))).toBe(true)

    const before = await snapshot()
    const cases: Array<[Uint8Array<ArrayBuffer>, string, number, Record<string, string>]> = [
      [
        new TextEncoder().encode('not a tarball'),
        'tarball',
        400,
        { code: 'invalid_request', message: 'The upload is not a gzipped tarball' },
      ],
      [
        await tarball(TOOLS.name, '0.3.1'),
        'tarball',
        400,
        { code: 'module_not_allowed', message: `${TOOLS.name}@0.3.1 is in the denyList` },
      ],
      [
        await tarball(PLAIN.name, '1.0.0'),
        'tarball',
        400,
        { code: 'install_failed', message: `${PLAIN.name} is not a node module` },
      ],
      [
        await tarball(SHOUT.name, '1.2.0'),
        'file',
        400,
        { code: 'invalid_request', message: 'Missing required file: tarball' },
      ],
    ]
    for (const [bytes, field, status, body] of cases) {
      const refused = await upload(server, bytes, field)
      expect(refused.status, body.message).toBe(status)
      expect(await refused.json()).toEqual(body)
      expect(await snapshot(), body.message).toEqual(before)
    }
  })
})
