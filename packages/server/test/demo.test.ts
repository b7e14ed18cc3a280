// The warning about the demo's well-known credentials, from the built `flowadmin start`.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import * as argon2 from 'argon2'
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { demoCredentialsIn } from '../src/demo.js'
import { killAll, requireBuild, runCli } from './cli-process.js'

const DEMO_SETTINGS = fileURLToPath(new URL('../../../examples/demo/settings.json', import.meta.url))
const WARNING =
  'flowadmin: warning: demo credentials are in use (admin / flowadmin-demo, viewer / flowadmin-view); never expose this server\n'

const hash = (password: string) =>
  argon2.hash(password, { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 })

const settingsWith = (users: Array<{ username: string; password: string }>) => ({
  adminAuth: {
    type: 'credentials' as const,
    users: users.map((user) => ({ ...user, permissions: '*' })),
  },
})

describe('demoCredentialsIn', () => {
  it('names each demo user whose hash matches the demo password', async () => {
    const settings = settingsWith([
      { username: 'admin', password: await hash('flowadmin-demo') },
      { username: 'viewer', password: await hash('another password') },
      { username: 'alice', password: await hash('flowadmin-view') },
    ])
    expect(await demoCredentialsIn(settings)).toEqual(['admin / flowadmin-demo'])
  })

  it('finds none without adminAuth, or when the demo names have other passwords', async () => {
    expect(await demoCredentialsIn({ adminAuth: null })).toEqual([])
    const settings = settingsWith([
      { username: 'admin', password: await hash('admin-pw') },
      { username: 'viewer', password: await hash('flowadmin-demo') },
    ])
    expect(await demoCredentialsIn(settings)).toEqual([])
  })
})

describe('flowadmin start', () => {
  let userDir: string
  beforeAll(() => requireBuild())
  beforeEach(async () => {
    userDir = await mkdtemp(path.join(tmpdir(), 'flowadmin-demo-'))
  })
  afterEach(async () => {
    await killAll()
    await rm(userDir, { recursive: true, force: true })
  })
  afterAll(killAll)

  async function started(settingsFile: string) {
    const run = runCli(['start', '--settings', settingsFile, '--user-dir', userDir, '--port', '0'])
    await run.line(/^flowadmin listening on /)
    return run
  }

  it('warns on stderr, before it listens, when started with the demo settings', async () => {
    const run = await started(DEMO_SETTINGS)
    await expect.poll(() => run.stderr).toContain(WARNING)
  })

  it('says nothing of the demo when other credentials are in use', async () => {
    const file = path.join(userDir, 'settings.json')
    await writeFile(
      file,
      JSON.stringify(settingsWith([{ username: 'admin', password: await hash('admin-pw') }])),
    )
    const run = await started(file)
    expect(run.stderr).not.toContain('demo')
  })

  it('no longer takes --demo', async () => {
    const run = runCli(['start', '--demo', '--user-dir', userDir, '--port', '0'])
    expect(await run.exited).toBe(2)
    expect(run.stderr).toContain('Unknown option')
  })
})
