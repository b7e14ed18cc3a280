// An instance in fleet mode with a credential of its own: a stub flowadmin, a stand-in for the
// instance's admin API and its settings file without the shared secret (or with it), started and
// restarted on one userDir.
import { mkdtempSync, readFileSync, statSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import type { FlowadminOptions } from '../index.js'
import { startFakeNodeRed } from './fake-node-red.js'
import { desiredState } from './fleet-setup.js'
import { auditHandlerOf, loadSettingsModule, type SettingsModule } from './settings-module.js'
import { type StubFlowadmin, startStubFlowadmin } from './stub-flowadmin.js'

const require = createRequire(import.meta.url)

export const CREDENTIAL_FILE = '.flowadmin-credential'

/** The options without the shared clientId and clientSecret (JSON leaves undefined out). */
export const OWN = { clientId: undefined, clientSecret: undefined } as const

export interface KeptCredential {
  url: string
  instance: string
  resourceServer: string
  clientId: string
  clientSecret: string
  machine: string
}

/** A stub flowadmin with a desired state, polls held at most `hold` seconds. */
export async function startFlowadmin(hold = 2) {
  const stub = await startStubFlowadmin()
  stub.fleet.setHold(hold)
  stub.fleet.setDesired(desiredState('1'))
  return stub
}

let starts = 0

/** One start of Node-RED on `userDir` (a new one by default), with these options. */
export async function startInstance(
  stub: StubFlowadmin,
  options: Partial<FlowadminOptions> & Record<string, unknown>,
  userDir = mkdtempSync(path.join(tmpdir(), 'flowadmin-enrol-')),
) {
  const nodeRed = await startFakeNodeRed([])
  starts += 1
  const settings = loadSettingsModule(stub.url, {
    options: { fleet: true, audit: { delayMs: 0 }, ...options },
    serverPort: nodeRed.port,
    auditLogger: true,
    userDir,
    fileName: `settings-${starts}.js`,
  })
  nodeRed.authenticateWith(settings.adminAuth.tokens)
  nodeRed.auditTo(auditHandlerOf(settings))
  return {
    userDir,
    settings,
    nodeRed,
    lines: settings.lines,
    file: path.join(userDir, CREDENTIAL_FILE),
    /** The credential file, parsed; null when absent. */
    kept(): KeptCredential | null {
      try {
        return JSON.parse(readFileSync(path.join(userDir, CREDENTIAL_FILE), 'utf8')) as KeptCredential
      } catch {
        return null
      }
    },
    mode: () => statSync(path.join(userDir, CREDENTIAL_FILE)).mode & 0o777,
    /** Stops the agent, its enrolment and the stand-in. */
    async close() {
      await stop(settings)
      await nodeRed.close()
    },
  }
}

export type Instance = Awaited<ReturnType<typeof startInstance>>

/** Stops what the helper runs for these settings (the fleet agent, the enrolment). */
export async function stop(settings: SettingsModule) {
  const { stateOf } = require('../lib/state.js') as {
    stateOf(options: object): { fleet: { stop(): Promise<void> } | null; credentials: { stop(): void } }
  }
  const state = stateOf(settings.options)
  state.credentials.stop()
  await state.fleet?.stop()
}

/** Basic `id:secret` as the helper sends it. */
export const basic = (
  require('../lib/client.js') as { basicAuthorization(id: string, secret: string): string }
).basicAuthorization

/** Resolves once `test()` holds, looked at every 50 ms. */
export async function until(test: () => boolean) {
  while (!test()) await new Promise((resolve) => setTimeout(resolve, 50))
}
