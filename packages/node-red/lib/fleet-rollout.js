'use strict'

const { firstLine } = require('./text')
const { readKept, writeKept } = require('./fleet-rollout-file')
const { isTarget, isTargetRef, withVariables } = require('./fleet-rollout-target')
const { cleanText } = require('./fleet-report')
const { missingCredentialsOf } = require('./node-red-credentials')
const { backoff, onceEach } = require('./timing')

// The fleet agent's rollouts: a poll's `flows` names this instance's target (a rollout of a
// snapshot, and a digest of its variables). When that pair is not the one applied last, the agent
// fetches the target, installs the modules Node-RED lacks, deploys the flows with the variables
// through its own admin API (a full deploy), and reports the outcome. It keeps what it applied in
// `<userDir>/.flowadmin-flows.json`, so a restart does not deploy again; a pair is applied once,
// a failed one is not tried again until the target changes. At every deploy Node-RED audits (and
// once at start) it reads the rev Node-RED runs: another than the one it deployed is drift,
// reported with who deployed; in `enforce` mode the target is deployed again. One thing at a
// time; a newer target that comes during an apply is applied after it. Never throws.

/** After a deploy's audit event (logged as it begins), the rev is read this long after it. */
const DRIFT_READS_MS = [150, 1000, 3000, 6000]
/** Reports waiting while flowadmin cannot be told; past it the oldest go. */
const MAX_WAITING_REPORTS = 20

const short = firstLine

/**
 * @param {object} parts
 * @param {ReturnType<import('./local-admin').createLocalAdmin>} parts.local
 * @param {{hold(module: string): void, settle(): Promise<unknown>}} parts.watcher told of the
 *   modules the agent installs, so they are not taken for hand changes
 * @param {() => Promise<{status: number, body: unknown}>} parts.fetchTarget
 *   `GET /fleet/instances/{id}/flows/target` (status 0: no answer)
 * @param {(body: string) => Promise<{status: number, body: unknown, revoked?: boolean}>} parts.send
 *   `POST /fleet/instances/{id}/flows/report`
 * @param {string} parts.userDir where the file of what was applied is kept
 * @param {ReturnType<import('./timing').createStopper>} parts.stopper
 * @param {(line: string) => void} parts.log
 * @param {(flows: object[]) => string[] | null} [parts.missingCredentials]
 */
function createRollouts({
  local,
  watcher,
  fetchTarget,
  send,
  userDir,
  stopper,
  log,
  missingCredentials = missingCredentialsOf,
}) {
  /** What was applied last: `{rollout, variables, outcome, rev, mode}`, or null. */
  let kept = readKept(userDir)
  /** The target the latest poll named, or null (none). */
  let latest = null
  let applyDue = false
  let restoreDue = false
  let driftDue = false
  /** Who made the latest deploy Node-RED audited (null: not said, or at start). */
  let driftBy = null
  /** The rev last reported as drift: not reported again. */
  let driftTold = null
  let running = false
  let current = Promise.resolve()
  /** Applies that could not be made in a row (flowadmin or Node-RED did not answer). */
  let failures = 0
  let retry = null
  const reports = []
  let sending = false
  let sendFailures = 0
  let sendRetry = null
  const trouble = onceEach(log)
  const refusal = onceEach(log)
  let uncountedTold = false

  const timers = new Set()
  /** Runs `task` after `ms` unless the agent stopped; the timer keeps no process alive. */
  function later(ms, task) {
    const timer = setTimeout(() => {
      timers.delete(timer)
      if (!stopper.stopped) task()
    }, ms)
    timer.unref?.()
    timers.add(timer)
    return timer
  }

  const modeNow = () => latest?.mode ?? kept?.mode ?? 'report'
  const isApplied = (ref) => kept !== null && kept.rollout === ref.rollout && kept.variables === ref.variables

  function keep(next) {
    kept = next
    const why = writeKept(userDir, next)
    if (why !== null) {
      trouble.say(
        `fleet: what was applied cannot be kept in ${userDir} (${why}): a restart of Node-RED deploys the target again`,
      )
    }
  }

  function wake() {
    if (running || stopper.stopped) return
    running = true
    current = run()
      .catch((error) =>
        log(`fleet: applying a rollout failed unexpectedly (${short(error?.message ?? error)})`),
      )
      .finally(() => {
        running = false
        if (!stopper.stopped && (applyDue || restoreDue || driftDue)) wake()
      })
  }

  async function run() {
    while (!stopper.stopped && (applyDue || restoreDue || driftDue)) {
      if (applyDue || restoreDue) {
        // A restore deploys the target even when it is the one applied; a new target is applied anyway.
        const restoring = restoreDue
        applyDue = false
        restoreDue = false
        await apply(restoring)
      } else {
        driftDue = false
        await checkDrift()
      }
    }
  }

  /** The apply (or restore) tried again later, after more failures in a row the later. */
  function tryAgain(restoring) {
    failures += 1
    if (retry !== null) return
    retry = later(backoff(failures), () => {
      retry = null
      if (restoring) restoreDue = true
      else applyDue = true
      wake()
    })
  }

  /** Fetches the target and applies it: when it is new, or to restore it (`restoring`). */
  async function apply(restoring) {
    const answer = await fetchTarget()
    if (stopper.stopped) return
    if (answer.status === 404) return
    if (answer.status !== 200 || !isTarget(answer.body)) {
      if (answer.status === 200) {
        trouble.say(
          'fleet: flowadmin answered the rollout target without its flows, modules and env as lists: tried again',
        )
      } else if (answer.status !== 0 && !answer.revoked) {
        trouble.say(`fleet: flowadmin answered HTTP ${answer.status} to the rollout target: tried again`)
      }
      return tryAgain(restoring)
    }
    const target = answer.body
    const again = isApplied(target)
    if (!restoring && again) {
      if (kept.mode !== target.mode) keep({ ...kept, mode: target.mode })
      return
    }
    const outcome = await deployTarget(target)
    if (stopper.stopped) return
    // Node-RED did not answer before it changed anything: tried again, not a failure of the target.
    if (outcome === null) return tryAgain(restoring)
    failures = 0
    const told = {
      rollout: target.rollout,
      variables: target.variables,
      outcome: outcome.outcome,
      rev: outcome.rev,
      message: outcome.message,
      missingCredentials: outcome.missing,
      ...(restoring && again && outcome.outcome === 'succeeded' && { restored: true }),
    }
    keep({
      rollout: target.rollout,
      variables: target.variables,
      outcome: outcome.outcome,
      // A failed apply changed no flows: those running are the ones deployed before.
      rev: outcome.rev ?? kept?.rev ?? null,
      mode: target.mode,
      modules:
        outcome.outcome === 'succeeded' ? target.modules.map((module) => module.name) : (kept?.modules ?? []),
      // Kept until flowadmin took it: a restart meanwhile sends it again.
      unreported: told,
    })
    driftTold = null
    if (outcome.outcome === 'succeeded') {
      log(
        `fleet: rollout ${target.rollout} (snapshot ${target.snapshot}) deployed${restoring ? ' again: the flows had changed here' : ''}`,
      )
    } else {
      log(`fleet: rollout ${target.rollout} (snapshot ${target.snapshot}) failed: ${outcome.message}`)
    }
    report(told)
  }

  /** Installs what Node-RED lacks, then deploys: `{outcome, rev, message, missing}`. */
  async function deployTarget(target) {
    const failed = (message) => ({ outcome: 'failed', rev: null, message, missing: [] })
    // The modules Node-RED has, read only when the flows need some.
    const here = target.modules.length === 0 ? new Map() : await local.modules()
    // Node-RED did not answer: nothing changed, tried again later.
    if (here === null) return null
    for (const module of target.modules) {
      const has = here.get(module.name)
      if (has !== undefined && (has.version === module.version || has.pendingVersion === module.version))
        continue
      watcher.hold(module.name)
      const message = await local.install(module.name, module.version)
      await watcher.settle().catch(() => {})
      if (message !== null) return failed(`${module.name}@${module.version} was not installed: ${message}`)
    }
    const deployed = await local.deploy(withVariables(target.flows, target.env))
    // No answer: deployed or not, a full deploy again is the same; tried again later.
    if (deployed.unanswered === true) return null
    if (deployed.rev === undefined) return failed(`Node-RED refused the deploy: ${deployed.message}`)
    let missing = null
    try {
      missing = missingCredentials(target.flows)
    } catch {
      missing = null
    }
    if (missing === null && !uncountedTold) {
      uncountedTold = true
      log(
        "fleet: Node-RED's credential store is not in this process: nodes lacking credentials are not named",
      )
    }
    return { outcome: 'succeeded', rev: deployed.rev, message: null, missing: missing ?? [] }
  }

  /** Reads the rev Node-RED runs: another than the one deployed is drift, reported (and undone in enforce). */
  async function checkDrift() {
    if (kept === null || kept.rev === null) return
    const deployed = await local.flowsWithRev()
    if (deployed === null || stopper.stopped) return
    if (deployed.rev === kept.rev) {
      driftTold = null
      return
    }
    if (deployed.rev !== driftTold) {
      driftTold = deployed.rev
      log(
        `fleet: the flows running here (rev ${deployed.rev}) are not those of rollout ${kept.rollout}${driftBy === null ? '' : `: deployed by ${driftBy}`}`,
      )
      report({ rev: deployed.rev, by: driftBy })
    }
    // Enforced, the flows last deployed are deployed again (also for a change told before the
    // group was enforced); a target that failed here deployed nothing to restore.
    if (modeNow() === 'enforce' && kept.outcome === 'succeeded') restoreDue = true
  }

  /** Queues a report; sent in order, tried again while flowadmin cannot be told. */
  function report(body) {
    // npm's and Node-RED's messages as flowadmin takes them (no control characters).
    reports.push({ text: JSON.stringify(body, cleanText), outcome: 'outcome' in body, body })
    if (reports.length > MAX_WAITING_REPORTS) {
      // Past the bound, the oldest report of drift goes (a newer one says more); outcomes stay.
      const drift = reports.findIndex((each) => !each.outcome)
      if (drift !== -1) reports.splice(drift, 1)
    }
    if (!sending && sendRetry === null) flush().catch(() => {})
  }

  /** flowadmin took (or refused for good) the outcome kept as unreported: no longer kept. */
  function told(body) {
    const pending = kept?.unreported
    if (pending !== undefined && pending.rollout === body.rollout && pending.variables === body.variables) {
      const { unreported: _sent, ...rest } = kept
      keep(rest)
    }
  }

  async function flush() {
    sending = true
    try {
      while (reports.length > 0 && !stopper.stopped) {
        const head = reports[0]
        const answer = await send(head.text)
        if (stopper.stopped) return
        const status = answer?.status ?? 0
        if (status >= 200 && status < 300) {
          reports.shift()
          told(head.body)
          sendFailures = 0
          refusal.clear()
          continue
        }
        if (status >= 400 && status < 500 && status !== 408 && status !== 429) {
          // Sent again, it would be refused again.
          reports.shift()
          told(head.body)
          if (!answer.revoked) {
            const why = typeof answer.body?.message === 'string' ? `: ${short(answer.body.message)}` : ''
            refusal.say(`fleet: flowadmin refused the rollout report (HTTP ${status})${why}`)
          }
          continue
        }
        sendFailures += 1
        sendRetry = later(backoff(sendFailures), () => {
          sendRetry = null
          if (!sending) flush().catch(() => {})
        })
        return
      }
    } finally {
      sending = false
    }
  }

  return {
    /** A poll's answer: its `flows` (undefined when it names no target). */
    want(flows) {
      if (!isTargetRef(flows)) {
        latest = null
        return
      }
      latest = flows
      if (isApplied(flows)) {
        if (kept.mode !== flows.mode) {
          keep({ ...kept, mode: flows.mode })
          // Enforced now: flows changed here before are restored.
          if (flows.mode === 'enforce') {
            driftDue = true
            wake()
          }
        }
        return
      }
      applyDue = true
      wake()
    },
    /** Node-RED audited a deploy by `by` (a user name, or null): its rev is read. */
    deployed(by) {
      driftBy = by
      for (const ms of DRIFT_READS_MS) {
        later(ms, () => {
          driftDue = true
          wake()
        })
      }
    },
    /**
     * At the agent's start: an outcome flowadmin did not take before a restart is sent again, and
     * the rev Node-RED runs is read once.
     */
    start() {
      if (kept?.unreported !== undefined) report(kept.unreported)
      driftBy = null
      driftDue = true
      wake()
    },
    /** What was applied last (tests). */
    kept: () => kept,
    /** The modules the flows deployed here need: a prune of the fleet's modules spares them. */
    spared: () => new Set(kept?.modules ?? []),
    /** Stops the timers; settles once no apply is under way. */
    stop() {
      for (const timer of timers) clearTimeout(timer)
      timers.clear()
      return current
    },
  }
}

module.exports = { createRollouts, DRIFT_READS_MS }
