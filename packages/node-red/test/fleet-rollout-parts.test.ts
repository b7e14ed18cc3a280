// The parts of the agent's rollouts on their own: the variables merged into the flows, the nodes
// named as lacking credentials, one apply at a time (a newer target after the one under way),
// reports tried again, and nothing that rejects when Node-RED's admin API misbehaves.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { waitFor } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'

const require = createRequire(import.meta.url)
type Node = Record<string, unknown>
type Env = Array<{ name: string; value: string; type: 'str' | 'cred' }>
const { withVariables } = require('../lib/fleet-rollout-target.js') as {
  withVariables(flows: Node[], env: Env): Node[]
}
const { missingCredentialsOf } = require('../lib/node-red-credentials.js') as {
  missingCredentialsOf(
    flows: Node[],
    store: { getDefinition(type: string): unknown; get(id: string): unknown } | null,
  ): string[] | null
}
const { createStopper } = require('../lib/timing.js') as {
  createStopper(): { stop(): void; stopped: boolean; signal: AbortSignal }
}
const { createRollouts } = require('../lib/fleet-rollout.js') as {
  createRollouts(parts: Record<string, unknown>): {
    want(flows: unknown): void
    deployed(by: string | null): void
    start(): void
    stop(): Promise<void>
  }
}

describe('the variables in the flows', () => {
  it('are merged into the global-config node the flows have, as the editor keeps them', () => {
    const flows: Node[] = [
      { id: 't1', type: 'tab' },
      {
        id: 'g1',
        type: 'global-config',
        env: [
          { name: 'SITE', value: 'north', type: 'str' },
          { name: 'OWN_SECRET', value: '__PWRD__', type: 'cred' },
        ],
        modules: { 'node-red-contrib-wave': '1.0.0' },
      },
    ]
    const before = structuredClone(flows)
    const deployed = withVariables(flows, [
      { name: 'SITE', value: 'south', type: 'str' },
      { name: 'TOKEN', value: 'abc', type: 'cred' },
    ])
    expect(flows).toEqual(before)
    expect(deployed).toEqual([
      { id: 't1', type: 'tab' },
      {
        id: 'g1',
        type: 'global-config',
        env: [
          { name: 'SITE', value: 'south', type: 'str' },
          { name: 'OWN_SECRET', value: '__PWRD__', type: 'cred' },
          { name: 'TOKEN', value: '__PWRD__', type: 'cred' },
        ],
        modules: { 'node-red-contrib-wave': '1.0.0' },
        // The snapshot's own secret keeps what this instance holds for it.
        credentials: { map: { OWN_SECRET: '__PWRD__', has_OWN_SECRET: true, TOKEN: 'abc', has_TOKEN: true } },
      },
    ])
  })

  it('add a node of their own when the flows have none, and nothing without variables', () => {
    const flows: Node[] = [{ id: 't1', type: 'tab' }]
    expect(withVariables(flows, [])).toEqual(flows)
    expect(withVariables(flows, [{ name: 'A', value: '1', type: 'str' }])).toEqual([
      { id: 't1', type: 'tab' },
      {
        id: 'flowadmin-variables',
        type: 'global-config',
        env: [{ name: 'A', value: '1', type: 'str' }],
        modules: {},
        credentials: { map: {} },
      },
    ])
  })
})

describe('the nodes lacking credentials', () => {
  const store = {
    getDefinition: (type: string) =>
      ({ 'http-request': { user: { type: 'text' }, password: { type: 'password' } } })[type],
    get: (id: string) => ({ a: { user: 'u' }, b: { user: '', password: '' } })[id],
  }
  it('are those whose type defines credentials and which hold none here', () => {
    const flows = [
      { id: 'a', type: 'http request' },
      { id: 'b', type: 'http request' },
      { id: 'c', type: 'http request' },
      { id: 'd', type: 'inject' },
      { id: 't', type: 'tab' },
    ]
    expect(missingCredentialsOf(flows, store)).toEqual(['b', 'c'])
  })
  it('cannot be told without Node-RED in this process', () => {
    expect(missingCredentialsOf([{ id: 'a', type: 'http request' }], null)).toBeNull()
  })
})

const TARGET = (rollout: string) => ({
  rollout,
  snapshot: 's1',
  mode: 'report',
  variables: 'v1',
  flows: [{ id: rollout, type: 'tab' }],
  modules: [],
  env: [],
})
const ref = (rollout: string) => ({ rollout, snapshot: 's1', mode: 'report', variables: 'v1' })

function agentWith(
  local: Record<string, unknown>,
  answers: { send?: number[]; kept?: string; modules?: Array<{ name: string; version: string }> } = {},
) {
  const userDir = mkdtempSync(path.join(tmpdir(), 'flowadmin-rollout-parts-'))
  if (answers.kept !== undefined) writeFileSync(path.join(userDir, '.flowadmin-flows.json'), answers.kept)
  const lines: string[] = []
  const sent: Array<Record<string, unknown>> = []
  let current = { ...TARGET('r1'), modules: answers.modules ?? [] }
  const stopper = createStopper()
  const rollouts = createRollouts({
    local: { modules: async () => new Map(), flowsWithRev: async () => null, ...local },
    watcher: { hold() {}, settle: async () => {} },
    fetchTarget: async () => ({ status: 200, body: current }),
    send: async (body: string) => {
      const status = answers.send?.shift() ?? 204
      if (status === 204) sent.push(JSON.parse(body))
      return { status, body: null }
    },
    userDir,
    stopper,
    log: (line: string) => lines.push(line),
    missingCredentials: () => [],
  })
  return {
    rollouts,
    userDir,
    lines,
    sent,
    target(rollout: string) {
      current = TARGET(rollout)
    },
    async stop() {
      stopper.stop()
      await rollouts.stop()
    },
  }
}

describe('the rollout agent', () => {
  it('applies one target at a time: a newer one that comes meanwhile, after', async () => {
    const deploys: unknown[] = []
    let release: () => void = () => {}
    const agent = agentWith({
      deploy: async (flows: Node[]) => {
        deploys.push(flows[0]?.id)
        if (deploys.length === 1) await new Promise<void>((resolve) => (release = resolve))
        return { rev: `rev-${flows[0]?.id}` }
      },
    })
    agent.rollouts.want(ref('r1'))
    await waitFor(() => deploys.length === 1, 'the first deploy')
    agent.target('r2')
    agent.rollouts.want(ref('r2'))
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(deploys).toEqual(['r1'])
    release()
    await waitFor(
      () => agent.sent.length === 2,
      () => JSON.stringify(agent.sent),
    )
    expect(deploys).toEqual(['r1', 'r2'])
    expect(agent.sent.map((report) => [report.rollout, report.rev])).toEqual([
      ['r1', 'rev-r1'],
      ['r2', 'rev-r2'],
    ])
    await agent.stop()
  })

  it('sends a report again until flowadmin takes it', async () => {
    const agent = agentWith({ deploy: async () => ({ rev: 'rev-1' }) }, { send: [503, 0] })
    agent.rollouts.want(ref('r1'))
    await waitFor(() => agent.sent.length === 1, 'the report taken', { timeoutMs: 10_000 })
    expect(agent.sent[0]).toMatchObject({ rollout: 'r1', outcome: 'succeeded', rev: 'rev-1' })
    await agent.stop()
  })

  it('sends at its start an outcome flowadmin did not take before a restart, and deploys nothing again', async () => {
    const first = agentWith({ deploy: async () => ({ rev: 'rev-1' }) }, { send: [503, 503, 503, 503, 503] })
    first.rollouts.want(ref('r1'))
    await waitFor(() => first.lines.some((line) => line.includes('deployed')), 'the deploy')
    await first.stop()
    expect(first.sent).toEqual([])
    const kept = readFileSync(path.join(first.userDir, '.flowadmin-flows.json'), 'utf8')
    const deploys: unknown[] = []
    const second = agentWith(
      {
        deploy: async () => {
          deploys.push(1)
          return { rev: 'rev-2' }
        },
      },
      { kept },
    )
    second.rollouts.start()
    second.rollouts.want(ref('r1'))
    await waitFor(() => second.sent.length === 1, 'the outcome sent again')
    expect(second.sent[0]).toMatchObject({ rollout: 'r1', outcome: 'succeeded', rev: 'rev-1' })
    expect(deploys).toEqual([])
    expect(
      JSON.parse(readFileSync(path.join(second.userDir, '.flowadmin-flows.json'), 'utf8')),
    ).not.toHaveProperty('unreported')
    await second.stop()
  })

  it('tries again, failing nothing, while Node-RED does not answer', async () => {
    let answers = 0
    const agent = agentWith({
      deploy: async () => (++answers < 2 ? { unanswered: true, message: 'no answer' } : { rev: 'rev-1' }),
    })
    agent.rollouts.want(ref('r1'))
    await waitFor(() => agent.sent.length === 1, 'the report', { timeoutMs: 10_000 })
    expect(agent.sent[0]).toMatchObject({ rollout: 'r1', outcome: 'succeeded' })
    expect(answers).toBe(2)
    await agent.stop()
  })

  it('tries again while Node-RED does not say which modules it has, when the flows need one', async () => {
    let answers = 0
    const wave = { name: 'node-red-contrib-wave', version: '1.0.0' }
    const agent = agentWith(
      {
        modules: async () => (++answers < 2 ? null : new Map([[wave.name, { version: '1.0.0' }]])),
        deploy: async () => ({ rev: 'rev-1' }),
      },
      { modules: [wave] },
    )
    agent.rollouts.want(ref('r1'))
    await waitFor(() => agent.sent.length === 1, 'the report', { timeoutMs: 10_000 })
    expect(agent.sent[0]).toMatchObject({ rollout: 'r1', outcome: 'succeeded' })
    expect(answers).toBe(2)
    await agent.stop()
  })

  it('never rejects: an admin API that throws is a line in the log', async () => {
    const agent = agentWith({
      deploy: () => {
        throw new Error('broken\nstack')
      },
    })
    agent.rollouts.want(ref('r1'))
    await waitFor(() => agent.lines.length > 0, 'a line')
    expect(agent.lines).toEqual(['fleet: applying a rollout failed unexpectedly (broken)'])
    expect(agent.sent).toEqual([])
    await agent.stop()
  })

  it('takes no kept file that is not its own, and deploys then', async () => {
    const deploys: unknown[] = []
    const agent = agentWith(
      {
        deploy: async () => {
          deploys.push(1)
          return { rev: 'rev-1' }
        },
      },
      { kept: '{"rollout":"r1","variables":"v1"}' },
    )
    agent.rollouts.want(ref('r1'))
    await waitFor(() => agent.sent.length === 1, 'the report')
    expect(deploys).toEqual([1])
    await agent.stop()
  })
})

describe('prune beside rollouts', () => {
  const { removalsOf } = require('../lib/fleet-apply.js') as {
    removalsOf(desired: Record<string, unknown>, local: Map<string, unknown>, spared?: Set<string>): string[]
  }
  const here = new Map([
    ['node-red-contrib-wave', {}],
    ['node-red-contrib-by-hand', {}],
    ['node-red-contrib-fleet', {}],
  ])
  const desired = { prune: true, removals: [], installs: [{ module: 'node-red-contrib-fleet' }] }

  it('removes what the fleet did not install, but spares the modules a deployed rollout needs', () => {
    expect(removalsOf(desired, here)).toEqual(['node-red-contrib-wave', 'node-red-contrib-by-hand'])
    expect(removalsOf(desired, here, new Set(['node-red-contrib-wave']))).toEqual([
      'node-red-contrib-by-hand',
    ])
    expect(removalsOf({ ...desired, prune: false }, here, new Set())).toEqual([])
  })
})

describe('what the agent keeps of a rollout', () => {
  const { readKept, writeKept } = require('../lib/fleet-rollout-file.js') as {
    readKept(userDir: string): unknown
    writeKept(userDir: string, kept: unknown): string | null
  }
  const kept = { rollout: 'r1', variables: 'v1', outcome: 'succeeded', rev: 'rev-1', mode: 'report' }

  it('is written whole, read back, and a folder it cannot be written to says why and leaves nothing', () => {
    const userDir = mkdtempSync(path.join(tmpdir(), 'flowadmin-kept-'))
    expect(writeKept(userDir, kept)).toBeNull()
    expect(readKept(userDir)).toEqual(kept)
    const missing = path.join(userDir, 'gone')
    expect(writeKept(missing, kept)).toBe('ENOENT')
    expect(readKept(missing)).toBeNull()
    writeFileSync(path.join(userDir, '.flowadmin-flows.json'), '{"rollout":')
    expect(readKept(userDir)).toBeNull()
  })
})
