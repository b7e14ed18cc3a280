// The second-factor key printed in the repository's examples is refused at start, unless the
// demo runs or FLOWADMIN_ALLOW_EXAMPLE_MFA_KEY=1 says it is meant: a copy of an example's settings
// never seals people's TOTP secrets with a key anyone can read.
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { ALLOW_EXAMPLE_MFA_KEY_ENV, EXAMPLE_MFA_KEY, MFA_KEY_ENV } from '../src/config/settings/mfa.js'
import { type RunningServer, type ServerOptions, SettingsError, startServer } from '../src/index.js'
import { captureLog } from './log-capture.js'

const EXAMPLES = fileURLToPath(new URL('../../../examples/', import.meta.url))
const exampleSettings = async (file: string) =>
  JSON.parse(await readFile(path.join(EXAMPLES, file), 'utf8')) as {
    adminAuth: { mfa?: { key?: string } } & Record<string, unknown>
  } & Record<string, unknown>

let userDir: string
const running: RunningServer[] = []
const saved = {
  [MFA_KEY_ENV]: process.env[MFA_KEY_ENV],
  [ALLOW_EXAMPLE_MFA_KEY_ENV]: undefined as string | undefined,
}

beforeEach(async () => {
  userDir = await mkdtemp(path.join(tmpdir(), 'flowadmin-example-key-'))
  saved[ALLOW_EXAMPLE_MFA_KEY_ENV] = process.env[ALLOW_EXAMPLE_MFA_KEY_ENV]
  delete process.env[ALLOW_EXAMPLE_MFA_KEY_ENV]
  delete process.env[MFA_KEY_ENV]
})
afterEach(async () => {
  for (const server of running.splice(0)) await server.close()
  for (const [name, value] of Object.entries(saved)) {
    if (value === undefined) delete process.env[name]
    else process.env[name] = value
  }
  await rm(userDir, { recursive: true, force: true })
})

/** Starts the fleet example's settings (in a scratch userDir, on a free port). */
async function startFleetExample(options: Partial<ServerOptions> = {}, mfaKey?: string) {
  const settings = await exampleSettings('fleet/flowadmin.json')
  if (mfaKey !== undefined) {
    // The key from the environment instead of the file.
    process.env[MFA_KEY_ENV] = mfaKey
    settings.adminAuth.mfa = {}
  }
  const server = await startServer({
    settings,
    userDir,
    port: 0,
    stdout: () => {},
    logger: captureLog().logger,
    ...options,
  })
  running.push(server)
  return server
}

describe('the examples’ second-factor key', () => {
  it('is the key both examples print', async () => {
    expect((await exampleSettings('fleet/flowadmin.json')).adminAuth.mfa?.key).toBe(EXAMPLE_MFA_KEY)
    expect((await exampleSettings('demo/settings.json')).adminAuth.mfa?.key).toBe(EXAMPLE_MFA_KEY)
  })

  it('is refused at start, from the settings or the environment, saying what to do', async () => {
    for (const fromEnvironment of [false, true]) {
      const error = await startFleetExample({}, fromEnvironment ? EXAMPLE_MFA_KEY : undefined).catch(
        (caught: unknown) => caught,
      )
      expect(error).toBeInstanceOf(SettingsError)
      expect((error as Error).message).toBe(
        "adminAuth.mfa.key (or FLOWADMIN_MFA_KEY) is the key printed in flowadmin's examples, which anyone can read, " +
          'so second factors sealed with it would be no secret: make a key of your own (`openssl rand -base64 48`). ' +
          'Only to run an example as it is, set FLOWADMIN_ALLOW_EXAMPLE_MFA_KEY=1.',
      )
    }
    expect(running).toEqual([])
  })

  it('is taken when the demo runs, or when FLOWADMIN_ALLOW_EXAMPLE_MFA_KEY=1 says it is meant', async () => {
    expect((await startFleetExample({ allowExampleMfaKey: true })).authEnabled).toBe(true)
    await running.pop()?.close()
    process.env[ALLOW_EXAMPLE_MFA_KEY_ENV] = '1'
    expect((await startFleetExample()).authEnabled).toBe(true)
    await running.pop()?.close()
    process.env[ALLOW_EXAMPLE_MFA_KEY_ENV] = 'yes'
    await expect(startFleetExample()).rejects.toBeInstanceOf(SettingsError)
  })

  it('another key of the same length is no example’s', async () => {
    expect((await startFleetExample({}, 'x'.repeat(EXAMPLE_MFA_KEY.length))).authEnabled).toBe(true)
  })
})
