// One instance of a fleet for a test: a stub flowadmin with a desired state, a stand-in for the
// instance's Node-RED admin API, and its settings file with the helper in fleet mode (and its audit
// logger, whose handler Node-RED's audit messages go to).
import type { FlowadminOptions } from '../index.js'
import { type FakeModule, startFakeNodeRed } from './fake-node-red.js'
import { agentOf, auditHandlerOf, loadSettingsModule } from './settings-module.js'
import { type Desired, startStubFlowadmin } from './stub-flowadmin.js'

export interface FleetSetup {
  modules?: FakeModule[]
  desired?: Desired
  /** flowadmin's hold, in seconds. */
  hold?: number
  instanceId?: string
  installMs?: number
  options?: Partial<FlowadminOptions>
}

export const desiredState = (version: string, overrides: Partial<Desired> = {}): Desired => ({
  version,
  prune: false,
  modules: [],
  installs: [],
  removals: [],
  ...overrides,
})

export async function startFleetInstance(setup: FleetSetup = {}) {
  const id = setup.instanceId ?? 'nr-1'
  const stub = await startStubFlowadmin()
  stub.fleet.setHold(setup.hold ?? 15)
  stub.fleet.setDesired(setup.desired ?? desiredState('1'))
  const nodeRed = await startFakeNodeRed(setup.modules ?? [], { installMs: setup.installMs ?? 0 })
  const settings = loadSettingsModule(stub.url, {
    options: { fleet: true, instanceId: id, audit: { delayMs: 0 }, ...setup.options },
    serverPort: nodeRed.port,
    auditLogger: true,
  })
  nodeRed.authenticateWith(settings.adminAuth.tokens)
  nodeRed.auditTo(auditHandlerOf(settings))
  return {
    id,
    stub,
    nodeRed,
    settings,
    /** The reports flowadmin received from this instance, their bodies. */
    reports: () => stub.fleet.reportsOf(id) as Array<Record<string, unknown>>,
    polls: () => stub.fleet.pollsOf(id),
    async close() {
      await agentOf(settings).stop()
      await Promise.all([stub.close(), nodeRed.close()])
    },
  }
}

export type FleetInstance = Awaited<ReturnType<typeof startFleetInstance>>

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
