// The audit events still waiting when Node-RED exits: sent in batches within a time budget (the
// exit waits for them); what flowadmin did not take in it is counted in the log.
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { afterEach, describe, expect, test } from 'vitest'
import { type StubFlowadmin, startStubFlowadmin } from './stub-flowadmin.js'

const require = createRequire(import.meta.url)
let stub: StubFlowadmin | undefined
afterEach(async () => {
  await stub?.close()
  stub = undefined
})

describe('the audit events still waiting at exit', () => {
  /** A process that logs `count` events and exits at once, as Node-RED exits once stopped. */
  function exitWith(url: string, count: number) {
    const script = `
      const flowadmin = require(${JSON.stringify(require.resolve('../index.js'))})
      const setting = flowadmin.auditLogger({ url: ${JSON.stringify(url)}, clientId: 'fleet', clientSecret: 's3cret',
        timeoutMs: 1000, log: (line) => console.log(line), audit: { instance: 'line-9', delayMs: 60000, batchSize: 100 } })
      const handle = setting.handler({})
      for (let i = 0; i < ${count}; i++) handle({ level: 98, event: 'flows.set', n: i, timestamp: Date.now() })
      process.exit(0)`
    const started = Date.now()
    const child = spawn(process.execPath, ['-e', script])
    let output = ''
    child.stdout.on('data', (chunk) => {
      output += chunk
    })
    return new Promise<{ status: number | null; tookMs: number; output: string }>((resolve) =>
      child.on('exit', (status) => resolve({ status, tookMs: Date.now() - started, output: output.trim() })),
    )
  }

  test('are all sent, in batches, in order', async () => {
    stub = await startStubFlowadmin()
    const { status, output } = await exitWith(stub.url, 1500)
    expect(status).toBe(0)
    expect(output).toBe('')
    expect(stub.to('/audit/events')).toHaveLength(15)
    expect(stub.audit.events.map((e) => (e.details as { n: number }).n)).toEqual([...Array(1500).keys()])
  })

  test('within a time budget: what flowadmin did not take in it is counted in the log', async () => {
    stub = await startStubFlowadmin()
    stub.setMode('hang')
    const { status, tookMs, output } = await exitWith(stub.url, 250)
    expect(status).toBe(0)
    expect(tookMs).toBeLessThan(3000 + 2500)
    expect(output).toBe(
      `250 audit events could not be sent to flowadmin at ${stub.url} within 3000 ms of exit: they are lost`,
    )
  })
})
