import { createRequire } from 'node:module'
import type * as Flowadmin from '../index.js'
import { CLIENT_ID, CLIENT_SECRET, type StubFlowadmin } from './stub-flowadmin.js'

// Loaded by Node's own require, as Node-RED loads it from its settings file.
const require = createRequire(import.meta.url)
export const flowadmin: typeof Flowadmin = require('../index.js')

/** A clock the test moves. */
export function fixedClock(start = 1_000_000) {
  let time = start
  return {
    now: () => time,
    advance(ms: number) {
      time += ms
    },
  }
}

/** Options for the stub, with the log lines kept in `lines`. */
export function optionsFor(stub: StubFlowadmin, extra: Partial<Flowadmin.FlowadminOptions> = {}) {
  const lines: string[] = []
  const options: Flowadmin.FlowadminOptions = {
    url: stub.url,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    log: (line) => lines.push(line),
    ...extra,
  }
  return { options, lines }
}
