import type { OpenStores } from '../store-contract.js'
import { describeAuth } from './auth.js'
import { describeEvents } from './events.js'
import { describeLoginQueue } from './login-queue.js'
import { describeModules } from './modules.js'
import { describeThrottle } from './throttle.js'
import { describeTokens } from './tokens.js'

/**
 * The core's rules that involve a store (logins, tokens, modules, throttling, events), over the
 * stores `open` gives: fresh ones for each core a test makes. Each store adapter runs it.
 */
export function describeCore(name: string, open: OpenStores): void {
  describeAuth(name, open)
  describeTokens(name, open)
  describeModules(name, open)
  describeThrottle(name, open)
  describeEvents(name, open)
  describeLoginQueue(name, open)
}
