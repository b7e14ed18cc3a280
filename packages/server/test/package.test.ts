// The installable package: `node scripts/package.mjs` packs one tarball, `npm install -g` puts it
// into a fresh prefix (third-party packages from the registry, native ones built as usual), and
// the installed `flowadmin` command serves the API.
import { execFile } from 'node:child_process'
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { killAll, runCli, startCli } from './cli-process.js'
import { logIn } from './password-grant.js'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const DEMO = path.join(ROOT, 'examples', 'demo')
const { version } = JSON.parse(await readFile(path.join(ROOT, 'packages', 'server', 'package.json'), 'utf8'))

let dir: string
let tarball: string
let installed: string

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'flowadmin-package-'))
  const packed = await run(process.execPath, [path.join(ROOT, 'scripts', 'package.mjs'), '--out', dir])
  tarball = packed.stdout.trim()
  const prefix = path.join(dir, 'prefix')
  // npm 11.16 and later run no install script of a global install unless it is allowed.
  await run(
    'npm',
    ['install', '--global', '--prefix', prefix, '--allow-scripts=argon2,better-sqlite3', tarball],
    { cwd: dir, maxBuffer: 16 * 1024 * 1024 },
  )
  installed = path.join(prefix, 'bin', 'flowadmin')
}, 900_000)
afterAll(async () => {
  await killAll()
  await rm(dir, { recursive: true, force: true })
})

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
})

it('installs with npm into a fresh prefix, and the installed command works', async () => {
  const versionRun = runCli(['--version'], { bin: installed })
  expect(await versionRun.exited).toBe(0)
  expect(versionRun.stdout).toBe(`${version}\n`)

  const hashRun = runCli(['hash-pw'], { bin: installed, input: 'admin-pw\n' })
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
  const {
    run: server,
    url,
    line,
  } = await startCli(['--settings', settingsFile, '--port', '0'], { bin: installed })
  expect(line).toContain(`(storage: ${path.join(userDir, 'flowadmin.db')}, auth: on)`)
  expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: 'ok' })
  expect(await (await fetch(`${url}/readyz`)).json()).toEqual({ status: 'ready' })
  const login = await logIn(url, 'admin-pw')
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
