// The installable package: `node scripts/package.mjs` packs one tarball, `npm install -g` puts it
// into a fresh prefix (third-party packages from the registry, native ones built as usual), and
// the installed `flowadmin` command, run as a program from <prefix>/bin, serves the API and the
// console. The same run packs the Node-RED helper, which `npm install <file>` puts into a fresh
// Node-RED userDir, offline, and a stock Node-RED then logs in through it.
import { execFile } from 'node:child_process'
import { cp, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import satisfies from 'semver/functions/satisfies.js'
import minVersion from 'semver/ranges/min-version.js'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { hashPassword } from '../src/adapters/argon2.js'
import { killAll, runCli, startCli } from './cli-process.js'
import { startNodeRed, stopNodeReds } from './node-red-process.js'
import { logIn } from './password-grant.js'
import { expectTuned, nodeStarted, runProgram, stopGroups } from './program-process.js'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const DEMO = path.join(ROOT, 'examples', 'demo')
const CONSOLE = path.join(ROOT, 'packages', 'console', 'dist', 'public')
const { version } = JSON.parse(await readFile(path.join(ROOT, 'packages', 'server', 'package.json'), 'utf8'))
const { engines } = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'))

let dir: string
let tarball: string
/** The Node-RED helper's tarball, the second line `package.mjs` prints. */
let helperTarball: string
let installed: string
/** What `npm install` printed, warnings included. */
let installOutput: string

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'flowadmin-package-'))
  const packed = await run(process.execPath, [path.join(ROOT, 'scripts', 'package.mjs'), '--out', dir])
  ;[tarball = '', helperTarball = ''] = packed.stdout.trim().split('\n')
  const prefix = path.join(dir, 'prefix')
  // npm 11.16 and later run no install script of a global install unless it is allowed. Its
  // warnings are kept, those about the engines among them.
  const install = await run(
    'npm',
    [
      'install',
      '--global',
      '--prefix',
      prefix,
      '--allow-scripts=argon2,better-sqlite3',
      '--loglevel=warn',
      tarball,
    ],
    { cwd: dir, maxBuffer: 16 * 1024 * 1024 },
  )
  installOutput = install.stdout + install.stderr
  installed = path.join(prefix, 'bin', 'flowadmin')
}, 900_000)
afterAll(async () => {
  await stopNodeReds()
  await killAll()
  await stopGroups()
  await rm(dir, { recursive: true, force: true })
})

/** A package's own package.json below node_modules (`name/`, `@scope/name/`, nested or not). */
const PACKAGE_MANIFEST = /^((@[^/]+\/)?[^/@.][^/]*\/node_modules\/)*(@[^/]+\/)?[^/@.][^/]*\/package\.json$/

/** Runs the installed command as a user's shell does: <prefix>/bin/flowadmin, as a program. */
const flowadmin = (args: string[], options: { cwd?: string; input?: string } = {}) =>
  runProgram(installed, args, options)

it('packs one tarball named after the version, with the workspace packages bundled in', async () => {
  expect(path.basename(tarball)).toBe(`flowadmin-${version}.tgz`)
  const { stdout } = await run('tar', ['-tzf', tarball])
  const files = stdout.trim().split('\n')
  expect(files).toContain('package/bin/flowadmin.cjs')
  expect(files).toContain('package/dist/cli.js')
  expect(files.some((file) => file.includes('node_modules'))).toBe(false)
  const manifest = JSON.parse((await run('tar', ['-xzOf', tarball, 'package/package.json'])).stdout)
  expect(manifest).toMatchObject({ name: 'flowadmin', version, bin: { flowadmin: './bin/flowadmin.cjs' } })
  expect(Object.keys(manifest.dependencies).filter((name) => name.startsWith('@flowadmin/'))).toEqual([])
  // Type declarations are for building, not for running.
  expect(Object.keys(manifest.dependencies).filter((name) => name.startsWith('@types/'))).toEqual([])
  expect(manifest.engines).toEqual(engines)
})

it("holds the console's built page and assets, each with its compressed variants", async () => {
  const { stdout } = await run('tar', ['-tzf', tarball])
  const files = stdout.trim().split('\n')
  const built = (await readdir(CONSOLE, { recursive: true, withFileTypes: true }))
    .filter((entry) => entry.isFile() && /\.(html|js|css|svg)(\.br|\.gz)?$/.test(entry.name))
    .map((entry) => path.relative(CONSOLE, path.join(entry.parentPath, entry.name)))
  expect(built).toContain('index.html')
  expect(built).toContain('index.html.br')
  expect(files.filter((file) => file.startsWith('package/dist/public/')).sort()).toEqual(
    built.map((file) => `package/dist/public/${file}`).sort(),
  )
})

it('installs without a warning about engines: every dependency runs on the Node.js it declares', async () => {
  expect(installOutput).not.toMatch(/EBADENGINE|Unsupported engine/)
  // And on the oldest Node.js the package accepts, not only on this one.
  const oldest = minVersion(engines.node)?.version as string
  const refusing: string[] = []
  const installedPackages = path.join(dir, 'prefix', 'lib', 'node_modules', 'flowadmin', 'node_modules')
  for (const entry of await readdir(installedPackages, { recursive: true })) {
    if (!PACKAGE_MANIFEST.test(entry.split(path.sep).join('/'))) continue
    const manifest = JSON.parse(await readFile(path.join(installedPackages, entry), 'utf8'))
    const wants = manifest.engines?.node
    if (wants !== undefined && !satisfies(oldest, wants)) {
      refusing.push(`${manifest.name}@${manifest.version} wants node ${wants}`)
    }
  }
  expect(refusing).toEqual([])
})

it('installs with npm into a fresh prefix, and the installed command works', async () => {
  const versionRun = flowadmin(['--version'])
  expect(await versionRun.exited).toBe(0)
  expect(versionRun.stderr).toBe('')
  expect(versionRun.stdout).toBe(`${version}\n`)

  const hashRun = flowadmin(['hash-pw'], { input: 'admin-pw\n' })
  expect(await hashRun.exited).toBe(0)
  const hash = hashRun.stdout.trim()
  expect(hash).toMatch(/^\$argon2id\$/)

  const userDir = path.join(dir, 'flows')
  await cp(path.join(DEMO, 'node_modules'), path.join(userDir, 'node_modules'), { recursive: true })
  const settingsFile = path.join(userDir, 'settings.json')
  await writeFile(
    settingsFile,
    JSON.stringify({
      auditLog: 'off',
      adminAuth: { type: 'credentials', users: [{ username: 'admin', password: hash, permissions: '*' }] },
    }),
  )
  const server = flowadmin(['start', '--settings', settingsFile, '--port', '0'])
  const line = await server.line(/^flowadmin listening on /)
  const url = /listening on (http:\/\/\S+)/.exec(line)?.[1]
  expect(line).toContain(`(storage: ${path.join(userDir, 'flowadmin.db')}, auth: on)`)
  // The installed server runs with the launcher's tuning, and warns of nothing missing.
  expectTuned(await nodeStarted(server.child.pid as number))
  expect(server.stderr).not.toContain('the console is not built')

  expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: 'ok' })
  expect(await (await fetch(`${url}/readyz`)).json()).toEqual({ status: 'ready' })

  // The console: the page at /, and the assets it names.
  const page = await fetch(`${url}/`)
  expect(page.status).toBe(200)
  expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8')
  const html = await page.text()
  expect(html).toContain('<title>flowadmin</title>')
  const assets = [...html.matchAll(/(?:src|href)="(console\/[^"]+)"/g)].map((match) => match[1])
  expect(assets.map((asset) => path.extname(asset as string)).sort()).toEqual(['.css', '.js', '.svg'])
  for (const asset of assets) {
    const response = await fetch(`${url}/${asset}`)
    expect(response.status, asset).toBe(200)
    expect(Buffer.from(await response.arrayBuffer())).toEqual(
      await readFile(path.join(CONSOLE, asset as string)),
    )
  }

  expect(await (await fetch(`${url}/auth/login`)).json()).toEqual({
    type: 'credentials',
    prompts: [
      { id: 'username', type: 'text', label: 'Username' },
      { id: 'password', type: 'password', label: 'Password' },
    ],
  })
  const login = await logIn(url as string, 'admin-pw')
  expect(login.status).toBe(200)
  const { access_token: token } = (await login.json()) as { access_token: string }
  const disabled = await fetch(`${url}/nodes/@flowadmin-examples/text-tools`, {
    method: 'PUT',
    headers: { Authorization: `Bearer ${token}`, 'Content-Type': 'application/json' },
    body: '{"enabled":false}',
  })
  expect(disabled.status).toBe(200)
  const settings = await fetch(`${url}/settings`, { headers: { Authorization: `Bearer ${token}` } })
  expect(await settings.json()).toMatchObject({ version })
  server.child.kill('SIGTERM')
  expect(await server.exited).toBe(0)
})

it('refuses --demo in an installation, which has no demo, with a usage error that says so', async () => {
  const demo = runCli(['start', '--demo', '--port', '0'], { bin: installed, cwd: dir })
  expect(await demo.exited).toBe(2)
  expect(demo.stdout).toBe('')
  expect(demo.stderr).toContain(
    '--demo runs the demo of the flowadmin repository (examples/demo), which this installation does not include',
  )
})

it('refuses to pack a checkout whose console is not built, saying what to run', async () => {
  // A checkout of its own: the packaging script and the repository's packages and dependencies,
  // with the console's sources but not its build.
  const checkout = path.join(dir, 'unbuilt')
  await mkdir(path.join(checkout, 'scripts'), { recursive: true })
  for (const script of ['package.mjs', 'command-build.mjs']) {
    await cp(path.join(ROOT, 'scripts', script), path.join(checkout, 'scripts', script))
  }
  for (const name of ['node_modules', 'package.json', 'README.md']) {
    await symlink(path.join(ROOT, name), path.join(checkout, name))
  }
  await mkdir(path.join(checkout, 'packages', 'console'), { recursive: true })
  for (const name of await readdir(path.join(ROOT, 'packages'))) {
    if (name !== 'console')
      await symlink(path.join(ROOT, 'packages', name), path.join(checkout, 'packages', name))
  }
  for (const name of await readdir(path.join(ROOT, 'packages', 'console'))) {
    const from = path.join(ROOT, 'packages', 'console', name)
    if (name !== 'dist') await symlink(from, path.join(checkout, 'packages', 'console', name))
  }
  const packing = runProgram(process.execPath, [path.join(checkout, 'scripts', 'package.mjs')], {
    cwd: checkout,
  })
  expect(await packing.exited).toBe(1)
  expect(packing.stdout).toBe('')
  expect(packing.stderr).toBe(
    'package: the console is not built (packages/console/dist/public/index.html is missing): run `pnpm build` first\n',
  )
  expect((await readdir(checkout)).filter((name) => name.endsWith('.tgz'))).toEqual([])
})

it('packs the Node-RED helper, which npm installs into a fresh userDir from the file, offline, and Node-RED logs in through', async () => {
  const helper = JSON.parse(await readFile(path.join(ROOT, 'packages', 'node-red', 'package.json'), 'utf8'))
  expect(path.basename(helperTarball)).toBe(`flowadmin-node-red-${helper.version}.tgz`)
  const userDir = path.join(dir, 'node-red-user-dir')
  await mkdir(userDir)
  // As the docs say: in the instance's userDir, from the file; nothing comes from a registry.
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', helperTarball], { cwd: userDir })
  const installedHelper = JSON.parse(
    await readFile(path.join(userDir, 'node_modules', '@flowadmin', 'node-red', 'package.json'), 'utf8'),
  )
  expect(installedHelper.version).toBe(helper.version)

  const secret = 'a-secret-of-the-fleet-for-this-test'
  const settings = path.join(dir, 'flowadmin-for-node-red.json')
  const adminAuth = {
    users: [{ username: 'alice', password: await hashPassword('alices-password'), permissions: '*' }],
    resourceServers: [{ id: 'fleet', secret: await hashPassword(secret) }],
  }
  await writeFile(settings, JSON.stringify({ storage: 'memory', auditLog: 'off', adminAuth }))
  const server = await startCli(['--settings', settings, '--port', '0'])
  // The settings.js requires the helper by its name, from the userDir's node_modules. A login
  // waits for flowadmin's argon2 as long as a loaded machine takes (the helper's default is 3 s).
  const nodeRed = await startNodeRed(
    userDir,
    {
      preamble: `const flowadmin = require('@flowadmin/node-red')
const options = { url: ${JSON.stringify(server.url)}, clientId: 'fleet', clientSecret: process.env.FLOWADMIN_SECRET, timeoutMs: 30000 }`,
      adminAuth: 'flowadmin.adminAuth(options)',
      httpAdminMiddleware: 'flowadmin.httpAdminMiddleware(options)',
    },
    { FLOWADMIN_SECRET: secret },
  )
  const login = await fetch(`${nodeRed.url}/auth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      client_id: 'node-red-editor',
      grant_type: 'password',
      scope: '*',
      username: 'alice',
      password: 'alices-password',
    }),
  })
  expect(login.status).toBe(200)
  const { access_token: token } = (await login.json()) as { access_token: string }
  const me = await fetch(`${nodeRed.url}/settings`, { headers: { Authorization: `Bearer ${token}` } })
  expect(((await me.json()) as { user: unknown }).user).toEqual({ username: 'alice', permissions: '*' })
}, 120_000)
