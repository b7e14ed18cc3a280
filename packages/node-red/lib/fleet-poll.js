'use strict'

const { backoff, onceEach, roundPause } = require('./timing')

// The fleet agent's poll loop: always running, it holds a poll of the desired state at flowadmin
// (`GET /fleet/instances/{id}/desired`, `If-None-Match` the version it has, `Prefer: wait=N`) and
// hands each new one to the applier. It pauses between rounds (250–750 ms, never zero), backs off
// with full jitter while flowadmin fails, and asks for a shorter hold once something on the way cut
// a held poll (a proxy or gateway's idle timeout).

/** The hold asked of a flowadmin that does not say its own (`hold` in the desired state). */
const DEFAULT_HOLD_S = 25
/** The shortest hold asked after cuts, and the longest asked at all. */
const MIN_HOLD_S = 5
const MAX_HOLD_S = 120
/** How long the answer to a poll may come after its hold. */
const ANSWER_SLACK_MS = 15_000

/** Whether a desired state has what the applier reads. */
function isDesired(body) {
  return (
    body !== null &&
    typeof body === 'object' &&
    typeof body.version === 'string' &&
    Array.isArray(body.modules) &&
    body.modules.every(
      (module) =>
        typeof module?.name === 'string' &&
        Array.isArray(module.sets) &&
        module.sets.every((set) => typeof set?.name === 'string' && typeof set.enabled === 'boolean'),
    ) &&
    Array.isArray(body.installs) &&
    body.installs.every(
      (entry) =>
        typeof entry?.module === 'string' &&
        (entry.version === null || entry.version === undefined || typeof entry.version === 'string') &&
        // The tarball flowadmin vetted, when it names one.
        (entry.integrity === undefined || typeof entry.integrity === 'string') &&
        (entry.tarball === undefined || typeof entry.tarball === 'string'),
    ) &&
    Array.isArray(body.removals) &&
    body.removals.every((name) => typeof name === 'string')
  )
}

/** The hold flowadmin says it gives a poll, in whole seconds. */
function holdOf(desired) {
  const hold = desired?.hold
  return Number.isInteger(hold) && hold >= 1 ? Math.min(hold, MAX_HOLD_S) : DEFAULT_HOLD_S
}

/** Whether an answer is flowadmin's own error (JSON with its `code`, or OAuth's `error`). */
const isFlowadminError = (body) =>
  body !== null &&
  typeof body === 'object' &&
  (typeof body.code === 'string' || typeof body.error === 'string')

/**
 * @param {object} parts
 * @param {(path: string, headers: object, timeoutMs: number) => Promise<{status: number, body: unknown, etag: string | null, failure?: string, revoked?: boolean}>} parts.poll
 *   revoked: the answer refused this instance's own credential, and that was told
 * @param {(answer: object) => void} parts.reachable tells the log of an answer that is not a cut
 * @param {(desired: object) => void} parts.onDesired
 * @param {ReturnType<import('./timing').createStopper>} parts.stopper
 * @param {(line: string) => void} parts.log
 * @param {string} parts.url flowadmin's, for the log
 * @param {() => number} [parts.now]
 */
function createPollLoop({ poll, reachable, onDesired, stopper, log, url, now = Date.now }) {
  let desired = null
  let etag = null
  /** The longest hold asked, lowered after cuts. */
  let ceiling = MAX_HOLD_S
  let cutTold = false
  let failures = 0
  const refusal = onceEach(log)
  const malformed = onceEach(log)
  const unexpected = onceEach(log)

  /** A held poll cut after `elapsed` ms: the next ones ask for less (80 % of that, 5 s at least). */
  function cut(elapsed, wait, why) {
    const shorter = Math.max(MIN_HOLD_S, Math.floor((0.8 * elapsed) / 1000))
    if (shorter >= ceiling) return
    ceiling = shorter
    if (cutTold) return
    cutTold = true
    log(
      `fleet: a poll to flowadmin at ${url} was cut after ${Math.round(elapsed / 1000)} s (${why}), within the ${wait} s flowadmin may hold it: ` +
        `a proxy or gateway on the way ends idle requests; polls now ask flowadmin to answer within ${ceiling} s`,
    )
  }

  /** One poll; the pause that follows it. */
  async function round() {
    const wait = Math.min(holdOf(desired), ceiling)
    const headers = { ...(etag !== null && { 'If-None-Match': etag }), Prefer: `wait=${wait}` }
    const started = now()
    const answer = await poll('/desired', headers, wait * 1000 + ANSWER_SLACK_MS)
    if (stopper.stopped) return 0
    const elapsed = now() - started
    // Only a held poll can be cut (without If-None-Match flowadmin answers at once); one that ends
    // within a second is flowadmin's answer, or its absence, not an idle timeout's.
    const held = etag !== null && elapsed >= 1000 && elapsed < wait * 1000
    if (held && answer.status === 0 && answer.failure === 'reset') {
      cut(elapsed, wait, 'the connection was reset')
      return roundPause()
    }
    if (held && [502, 503, 504].includes(answer.status) && !isFlowadminError(answer.body)) {
      cut(elapsed, wait, `HTTP ${answer.status} from something other than flowadmin`)
      return roundPause()
    }
    reachable(answer)
    if (answer.status === 304 || (answer.status === 200 && isDesired(answer.body))) {
      failures = 0
      refusal.clear()
      malformed.clear()
      if (answer.status === 200) {
        desired = answer.body
        etag = answer.etag ?? `"${desired.version}"`
        onDesired(desired)
      }
      return roundPause()
    }
    failures += 1
    if (answer.status === 200) {
      malformed.say(
        'fleet: flowadmin answered the poll with no desired state (version, modules, installs and removals as lists): nothing applied; tried again',
      )
    } else if (answer.status !== 0 && !answer.revoked) {
      // A credential of its own refused (revoked) is told by the credentials, once.
      const message = answer.body?.message
      refusal.say(
        `fleet: flowadmin answered HTTP ${answer.status} to the poll${typeof message === 'string' ? `: ${message.split('\n')[0].slice(0, 500)}` : ''}`,
      )
    }
    return backoff(failures)
  }

  return {
    async run() {
      while (!stopper.stopped) {
        let pause
        try {
          pause = await round()
        } catch (error) {
          failures += 1
          unexpected.say(
            `fleet: polling failed unexpectedly (${String(error?.message ?? error).split('\n')[0]}): tried again`,
          )
          pause = backoff(failures)
        }
        await stopper.sleep(pause)
      }
    },
    /** The hold asked now, in seconds (for tests). */
    hold: () => Math.min(holdOf(desired), ceiling),
  }
}

module.exports = { createPollLoop, holdOf, isDesired, DEFAULT_HOLD_S, MIN_HOLD_S, MAX_HOLD_S }
