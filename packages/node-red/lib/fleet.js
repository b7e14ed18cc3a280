'use strict'

// Fleet mode: this instance's agent for its node modules. Three parts run side by side: the poll
// loop (fleet-poll.js) holds a poll of flowadmin's desired state, the applier (fleet-apply.js) makes
// this Node-RED's modules what it says through its own admin API over loopback, and the watcher
// (fleet-watch.js) reads what Node-RED has; reports (fleet-report.js) tell flowadmin when that
// changed; asked for the flows it runs, it sends them (fleet-flows.js); a rollout's target it
// deploys, and it tells flowadmin when the flows running here are no longer those
// (fleet-rollout.js). It never throws into Node-RED, and while flowadmin cannot be reached it
// changes nothing.

const { createAgentToken, AGENT_PERMISSIONS, AGENT_USER } = require('./agent-token')
const { createApplier } = require('./fleet-apply')
const { createFlowsSender } = require('./fleet-flows')
const { leaveAtExit } = require('./fleet-leave')
const { createPollLoop } = require('./fleet-poll')
const { cleanText, createReporter } = require('./fleet-report')
const { createRollouts } = require('./fleet-rollout')
const { createWatcher } = require('./fleet-watch')
const { objectOf, request } = require('./http')
const { adminAddressOf, createLocalAdmin } = require('./local-admin')
const { instanceIdOf, keptInstanceIdOf, nodeRedSettingsOf, settledUserDir } = require('./node-red-settings')
const { createStopper } = require('./timing')

/** How often the agent looks for Node-RED's settings until Node-RED listens. */
const SETTINGS_LOOK_MS = 250
/** After this long without Node-RED's settings, the log says so (once). */
const SETTINGS_NOTICE_MS = 30_000

const short = (text) =>
  String(text ?? '')
    .split('\n')
    .find((line) => line.trim() !== '')
    ?.trim()
    .slice(0, 1000) ?? ''

/**
 * Starts the agent once Node-RED listens.
 *
 * @param {import('./options').Settings} settings
 * @param {object} adminAuth the object Node-RED's settings hold, to find those settings by
 * @param {import('./state').State} state shared with adminAuth (the agent's token is accepted
 *   there), the audit logger (Node-RED's module events, and this instance's fleet id) and the rest
 */
function startFleetAgent(settings, adminAuth, state) {
  const { log, url } = settings
  const agentToken = createAgentToken()
  const { credentials } = state
  const stopper = createStopper()
  let unreachable = false
  // The id is known at once when the options give it and no credential of its own may replace it:
  // the audit logger files events under it.
  if (settings.instanceId !== null && settings.clientId !== null && settings.enrolmentToken === null) {
    state.identity.settle(settings.instanceId)
  }

  /** flowadmin answered or not: one line per change. */
  const reachable = (ok, why) => {
    if (ok && unreachable) log(`fleet: flowadmin at ${url} answers again`)
    if (!ok && !unreachable) {
      log(
        `fleet: flowadmin at ${url} cannot be reached (${why}): this instance keeps its modules as they are`,
      )
    }
    unreachable = !ok
  }

  /**
   * A call to flowadmin: `{status, body, etag}`, status 0 with `failure` when there was no answer.
   * Whether flowadmin is reachable is told here, except for polls: a cut poll is the poll loop's to
   * judge (see reachableOf).
   */
  async function call(method, pathname, options) {
    const answer = await request(`${url}${pathname}`, {
      method,
      headers: {
        Authorization: credentials.authorization() ?? '',
        Accept: 'application/json',
        ...options.headers,
      },
      body: options.body,
      timeoutMs: options.timeoutMs,
      signal: stopper.signal,
    })
    if (stopper.stopped) return { status: 0, failure: 'aborted', reason: 'stopped', body: null, etag: null }
    const outcome =
      answer.status === 0
        ? { status: 0, failure: answer.failure, reason: answer.reason, body: null, etag: null }
        : {
            status: answer.status,
            body: objectOf(answer.text),
            etag: typeof answer.headers.etag === 'string' ? answer.headers.etag : null,
          }
    if (!options.polling) reachableOf(outcome)
    if (outcome.status === 401 && outcome.body?.error === 'invalid_client')
      outcome.revoked = credentials.rejected()
    else if (outcome.status > 0 && outcome.status < 400) credentials.accepted()
    return outcome
  }

  /**
   * This instance's id: its own credential's, else the instanceId option, else the one kept in
   * the userDir. Null when it has none, or no credential to poll with: fleet mode is off.
   */
  async function idOf(userDir) {
    await Promise.race([
      credentials.ready(),
      new Promise((resolve) => stopper.signal.addEventListener('abort', resolve, { once: true })),
    ])
    if (stopper.stopped) return null
    const own = credentials.instance
    if (own !== null) {
      const other = settings.instanceId ?? keptInstanceIdOf(userDir)
      if (other !== null && other !== own) {
        log(
          `fleet: this instance is ${JSON.stringify(own)} as its credential says, not ${JSON.stringify(other)} (${settings.instanceId !== null ? 'the instanceId option' : '.flowadmin-instance'})`,
        )
      }
      return own
    }
    if (credentials.authorization() === null) {
      log('fleet: this instance has no credential for flowadmin (it is not enrolled): fleet mode is off')
      return null
    }
    return instanceIdOf(settings.instanceId, userDir, log)
  }

  /** Tells the log whether flowadmin answered as it should. */
  function reachableOf(outcome) {
    if (outcome.status === 0)
      reachable(false, outcome.failure === 'timeout' ? 'no answer in time' : outcome.reason)
    else reachable(outcome.status < 500, `HTTP ${outcome.status}`)
  }

  /** Node-RED's settings once it listens; null when stopped first. */
  async function nodeRedListening() {
    const looking = Date.now()
    let noticed = false
    while (!stopper.stopped) {
      const nodeRed = nodeRedSettingsOf(adminAuth)
      if (nodeRed !== null && nodeRed.serverPort !== undefined) return nodeRed
      if (!noticed && Date.now() - looking >= SETTINGS_NOTICE_MS) {
        noticed = true
        log(
          "fleet: Node-RED's settings file (with this adminAuth and its settingsFile) is not found, or Node-RED does not listen yet: " +
            'fleet mode waits (it needs Node-RED started from a settings file, and one adminAuth(options) per options)',
        )
      }
      await stopper.sleep(SETTINGS_LOOK_MS)
    }
    return null
  }

  async function run() {
    const nodeRed = await nodeRedListening()
    if (nodeRed === null) return
    if (nodeRed.httpAdminRoot === false) {
      log(
        'fleet: httpAdminRoot is false, so there is no admin API to apply changes through; fleet mode is off',
      )
      return
    }
    const where = await adminAddressOf(nodeRed.uiHost)
    if (where.address === undefined) {
      log(`fleet: ${where.refused}: the agent calls its own Node-RED on this machine only; fleet mode is off`)
      return
    }
    if (stopper.stopped) return
    const userDir = settledUserDir(nodeRed)
    const id = await idOf(userDir)
    if (id === null) return
    state.identity.settle(id)
    const local = createLocalAdmin(
      {
        uiHost: where.address,
        serverPort: nodeRed.serverPort,
        httpAdminRoot: nodeRed.httpAdminRoot,
        https: nodeRed.https,
      },
      agentToken.token,
      stopper.signal,
    )
    const base = `/fleet/instances/${encodeURIComponent(id)}`
    const reporter = createReporter({
      send: (body) =>
        call('POST', `${base}/report`, {
          headers: { 'Content-Type': 'application/json' },
          body,
          timeoutMs: settings.timeoutMs * 3,
        }),
      facts: () => watcher.facts(),
      applier: () => applier.state(),
      stopper,
      log,
    })
    const watcher = createWatcher({
      local,
      events: state.nodeRedEvents,
      stopper,
      changed: () => reporter.update(),
      handChanges: (changes) => {
        reporter.noteChanges(changes)
        for (const change of changes) applier.handChange(change.module)
      },
      log,
    })
    const applier = createApplier({
      local,
      watcher,
      changed: () => reporter.update(),
      reverted: (entries) => reporter.noteReverted(entries),
      log,
      // The modules a rollout's flows need stay, whatever prune says.
      spared: () => rollouts.spared(),
    })
    const sender = createFlowsSender({
      flows: () => local.flows(),
      send: (body) =>
        call('POST', `${base}/flows`, {
          headers: { 'Content-Type': 'application/json' },
          body,
          timeoutMs: settings.timeoutMs * 3,
        }),
      log,
    })
    const rollouts = createRollouts({
      local,
      watcher,
      fetchTarget: () => call('GET', `${base}/flows/target`, { timeoutMs: settings.timeoutMs * 3 }),
      send: (body) =>
        call('POST', `${base}/flows/report`, {
          headers: { 'Content-Type': 'application/json' },
          body,
          timeoutMs: settings.timeoutMs * 3,
        }),
      userDir,
      stopper,
      log,
    })
    // A deploy Node-RED audits: its rev is read (the agent's own deploys are its rollouts').
    const unsubscribe = state.nodeRedEvents.subscribe((what, detail) => {
      if (what === 'flows' && detail?.by !== AGENT_USER) rollouts.deployed(detail?.by ?? null)
    })
    rollouts.start()
    const poller = createPollLoop({
      poll: async (path, headers, timeoutMs) => {
        const sentWith = credentials.authorization()
        const answer = await call('GET', `${base}${path}`, { headers, timeoutMs, polling: true })
        // Someone asked for the flows this instance runs: sent beside the polls.
        if (answer.status === 200 || answer.status === 304) {
          const name = answer.body?.snapshot?.name
          sender.asked(answer.status === 200 && typeof name === 'string' ? name : null)
        }
        // flowadmin asks for a new credential: rotated beside the polls (not again for a poll that
        // went out with the credential before the rotation).
        if (
          answer.status === 200 &&
          answer.body?.rotate === true &&
          sentWith === credentials.authorization()
        ) {
          credentials.rotate()
        }
        return answer
      },
      reachable: reachableOf,
      onDesired: (desired) => {
        applier.want(desired)
        rollouts.want(desired.flows)
      },
      stopper,
      log,
      url,
    })
    // Stopping Node-RED ends its process: flowadmin hears that it leaves, between polls too.
    const stay = leaveAtExit(id, {
      endpoint: `${url}${base}/lease`,
      authorization: () => credentials.authorization() ?? '',
    })
    try {
      await Promise.all([poller.run(), watcher.run()])
    } finally {
      stay()
      unsubscribe()
      reporter.stop()
      await Promise.all([applier.idle(), rollouts.stop()])
    }
  }

  /** Settles (never rejects) once the agent has stopped. */
  const finished = new Promise((resolve) => {
    setImmediate(() => {
      run()
        .catch((error) => log(`fleet: stopped unexpectedly (${short(error?.message ?? error)})`))
        .finally(() => {
          // Never known now: the audit logger files events under its own name.
          state.identity.settle(null)
          resolve()
        })
    })
  })

  return {
    isAgentToken: agentToken.isAgentToken,
    agentUser: agentToken.agentUser,
    /** Stops the agent: its calls are aborted; settles once it has stopped, never rejects. */
    stop() {
      stopper.stop()
      credentials.stop()
      return finished
    },
  }
}

module.exports = { cleanText, startFleetAgent, AGENT_PERMISSIONS }
