// The helper declares Node.js 18 (as Node-RED 4 does): its key paths run under a Node 18 binary
// from the npm registry (the `node-<platform>-<arch>` package, through npm and its cache) in a
// child process: the options, a round of the fleet agent against the stub flowadmin (a report with
// npm's text cleaned as flowadmin takes it), and the audit logger's buffer, exit flush included.
import { execFileSync, spawn } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { waitFor } from '@flowadmin/testkit'
import { afterAll, beforeAll, expect, test } from 'vitest'
import { type FakeNodeRed, startFakeNodeRed } from './fake-node-red.js'
import { desiredState } from './fleet-setup.js'
import { type StubFlowadmin, startStubFlowadmin } from './stub-flowadmin.js'

const require = createRequire(import.meta.url)
const folder = mkdtempSync(path.join(tmpdir(), 'flowadmin-node18-'))
let node18 = ''
let stub: StubFlowadmin
let nodeRed: FakeNodeRed

beforeAll(async () => {
  const npm = { encoding: 'utf8' as const, shell: process.platform === 'win32', cwd: folder }
  const tarball = execFileSync(
    'npm',
    ['pack', `node-${process.platform}-${process.arch}@18`, '--pack-destination', folder, '--silent'],
    npm,
  ).trim()
  execFileSync('tar', ['-xzf', path.join(folder, tarball), '-C', folder, 'package/bin/node'], npm)
  node18 = path.join(folder, 'package', 'bin', 'node')
  stub = await startStubFlowadmin()
  nodeRed = await startFakeNodeRed([])
}, 180_000)
afterAll(async () => {
  await stub?.close()
  await nodeRed?.close()
})

test('runs on Node 18: options, a fleet agent round, the audit buffer and its exit flush', async () => {
  expect(execFileSync(node18, ['--version'], { encoding: 'utf8' })).toMatch(/^v18\./)
  // npm's failure as it comes: colour codes, a tab, and text cut in the middle of a character.
  const npmError = '\u001b[31mnpm error\u001b[39m code E404\t404 Not Found - wave\ud83d'
  nodeRed.refuse('POST wave', npmError)
  stub.fleet.setDesired(desiredState('18', { installs: [{ module: 'wave', version: '1.0.0' }] }))
  const settingsFile = path.join(folder, 'settings.js')
  writeFileSync(
    settingsFile,
    `const flowadmin = require(${JSON.stringify(require.resolve('../index.js'))})
const options = { url: ${JSON.stringify(stub.url)}, clientId: 'fleet', clientSecret: 's3cret', fleet: true,
  instanceId: 'old-node', audit: { delayMs: 0 }, log: (line) => console.log(line) }
module.exports = { options, logging: { flowadmin: flowadmin.auditLogger(options) }, adminAuth: flowadmin.adminAuth(options),
  uiHost: '127.0.0.1', httpAdminRoot: '/', userDir: ${JSON.stringify(folder)} }
`,
  )
  const script = `
    const flowadmin = require(${JSON.stringify(require.resolve('../index.js'))})
    try {
      flowadmin.adminAuth({ url: 'ftp://x', clientId: 'a', clientSecret: 'b' })
    } catch (error) {
      console.log(error.message)
    }
    const settings = require(${JSON.stringify(settingsFile)})
    settings.settingsFile = ${JSON.stringify(settingsFile)}
    settings.serverPort = ${nodeRed.port}
    const logger = settings.logging.flowadmin
    const handle = logger.handler(logger)
    handle({ level: 98, event: 'flows.set', user: { username: 'alice' }, timestamp: Date.now() })
    process.stdin.on('data', () => {
      // The rest waits for the exit flush.
      for (let i = 0; i < 20; i++) handle({ level: 98, event: 'nodes.install', n: i, timestamp: Date.now() })
      process.exit(0)
    })`
  const child = spawn(node18, ['-e', script], { stdio: ['pipe', 'pipe', 'pipe'] })
  let output = ''
  child.stdout.on('data', (chunk) => {
    output += chunk
  })
  child.stderr.on('data', (chunk) => {
    output += chunk
  })
  const exited = new Promise((resolve) => child.on('exit', resolve))
  await waitFor(
    () => stub.fleet.reportsOf('old-node').length > 0 && stub.audit.events.length > 0,
    () => `output: ${output}`,
    { timeoutMs: 30_000 },
  )
  child.stdin.write('exit\n')
  expect(await exited).toBe(0)

  expect(output.trim().split('\n')).toEqual([
    '@flowadmin/node-red: url must start with https:// or http://, got "ftp://x"',
  ])
  expect(stub.fleet.reportsOf('old-node')[0]).toMatchObject({
    applied: '18',
    failures: [
      { module: 'wave', action: 'install', message: 'npm error code E404 404 Not Found - wave\ufffd' },
    ],
  })
  await waitFor(
    () => stub.audit.events.length === 21,
    () => `events: ${stub.audit.events.length}`,
  )
  expect(stub.audit.events.map((e) => [e.event, e.instance])).toEqual([
    ['flows.set', 'old-node'],
    ...Array.from({ length: 20 }, () => ['nodes.install', 'old-node']),
  ])
}, 60_000)
