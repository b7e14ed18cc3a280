'use strict'

// The fleet agent's applier: makes this Node-RED's modules what the desired state says, through
// its own admin API, one run at a time. It runs when a new desired state arrives, when the watcher
// saw a hand change, and again after a run Node-RED did not answer; the poll loop keeps polling
// meanwhile, so a long npm install never makes this instance look gone. What it did to undo a hand
// change is told as `reverted`.

/** Whether an install entry names a tarball flowadmin vetted (checked, and refused when malformed). */
const namesTarball = (entry) => entry.integrity !== undefined || entry.tarball !== undefined

/** After this long a run is told to flowadmin as under way (`applying: true`). */
const APPLYING_NOTICE_MS = 1000

/**
 * One run's plan against what Node-RED has (`local`, modules by name): the removals, the installs
 * and upgrades, and the node sets to enable or disable. Prune spares the modules the flows a
 * rollout deployed here need (`spared`).
 */
function removalsOf(desired, local, spared = new Set()) {
  const installs = new Set(desired.installs.map((entry) => entry.module))
  const removals = new Set(desired.removals)
  if (desired.prune)
    for (const name of local.keys()) if (!installs.has(name) && !spared.has(name)) removals.add(name)
  return [...removals].filter((name) => local.has(name))
}

/**
 * What an install entry asks of Node-RED: 'install' (it lacks the module), 'upgrade' (it runs
 * another version than the one flowadmin installed, and has not that one waiting for a restart),
 * or null.
 */
function installActionOf(entry, here) {
  if (here === undefined) return 'install'
  if (typeof entry.version !== 'string' || here.version === entry.version) return null
  return here.pendingVersion === entry.version ? null : 'upgrade'
}

/** The calls that give a module's sets the flags `wanted` asks: the whole module at once when one flag fits all. */
function setCallsOf(module, here) {
  const wanted = new Map(module.sets.map((set) => [set.name, set.enabled]))
  const differing = here.sets.filter((set) => wanted.has(set.name) && wanted.get(set.name) !== set.enabled)
  if (differing.length === 0) return []
  const flags = new Set(here.sets.filter((set) => wanted.has(set.name)).map((set) => wanted.get(set.name)))
  // One flag for every set: the module at once, all or nothing, as Node-RED does it.
  if (flags.size === 1) return [{ set: null, enabled: [...flags][0] }]
  return differing.map((set) => ({ set: set.name, enabled: wanted.get(set.name) }))
}

/**
 * @param {object} parts
 * @param {ReturnType<import('./local-admin').createLocalAdmin>} parts.local
 * @param {ReturnType<import('./fleet-watch').createWatcher>} parts.watcher
 * @param {() => void} parts.changed the applier's state changed (a report may be due)
 * @param {(entries: Array<{module: string, action: string}>) => void} parts.reverted hand changes undone
 * @param {(line: string) => void} parts.log
 * @param {() => Set<string>} [parts.spared] modules the deployed rollout's flows need: never pruned
 */
function createApplier({ local, watcher, changed, reverted, log, spared = () => new Set() }) {
  let latest = null
  let running = false
  let again = false
  let applying = false
  /** The desired version of the last run that reached Node-RED, and what was refused in it. */
  let applied = null
  let failures = []
  /** Installs and upgrades refused for the desired version: not tried again until it changes. */
  let refusedInstalls = new Map()
  let refusedFor = null
  /** Modules changed by hand since the last run, whose changes are undone (reverted) in the next. */
  const handChanged = new Set()

  async function once(desired) {
    if (refusedFor !== desired.version) {
      refusedInstalls = new Map()
      refusedFor = desired.version
    }
    let here = await local.modules()
    if (here === null) return null
    const refused = []
    const undone = []
    const act = async (module, action, change) => {
      watcher.hold(module)
      const message = await change()
      if (message !== null) return message
      if (handChanged.has(module)) undone.push({ module, action })
      return null
    }
    let altered = false
    for (const name of removalsOf(desired, here, spared())) {
      const message = await act(name, 'remove', () => local.remove(name))
      if (message === null) altered = true
      else refused.push({ module: name, action: 'remove', message })
    }
    for (const entry of desired.installs) {
      const action = installActionOf(entry, here.get(entry.module))
      if (action === null) continue
      const key = `${entry.module}@${entry.version}`
      const before = refusedInstalls.get(key)
      if (before !== undefined) {
        refused.push({ module: entry.module, action, message: before })
        continue
      }
      // The tarball flowadmin vetted when it names one (checked before Node-RED sees it); else by name.
      const message = await act(entry.module, action, () =>
        namesTarball(entry) ? local.installVetted(entry) : local.install(entry.module, entry.version ?? null),
      )
      if (message === null) altered = true
      else {
        if (message.startsWith('integrity mismatch')) log(`fleet: ${message}`)
        refusedInstalls.set(key, message)
        refused.push({ module: entry.module, action, message })
      }
    }
    if (altered) here = (await local.modules()) ?? here
    for (const module of desired.modules) {
      const mine = here.get(module.name)
      if (mine === undefined) continue
      for (const call of setCallsOf(module, mine)) {
        const action = call.enabled ? 'enable' : 'disable'
        const message = await act(module.name, action, () =>
          local.setEnabled(module.name, call.set, call.enabled),
        )
        if (message !== null) {
          refused.push({ module: module.name, action, message })
          break
        }
      }
    }
    return { refused, undone }
  }

  async function run() {
    running = true
    try {
      while (again && latest !== null) {
        again = false
        const desired = latest
        const undoing = new Set(handChanged)
        const notice = setTimeout(() => {
          applying = true
          changed()
        }, APPLYING_NOTICE_MS)
        notice.unref?.()
        let outcome = null
        try {
          outcome = await once(desired)
        } catch (error) {
          log(
            `fleet: applying failed unexpectedly (${String(error?.message ?? error).split('\n')[0]}): tried again at the next change`,
          )
        } finally {
          clearTimeout(notice)
          await watcher.settle().catch(() => {})
        }
        applying = false
        if (outcome === null) {
          // Node-RED did not answer: tried again at its next good answer.
          watcher.onceAnswered(() => wake())
        } else {
          for (const name of undoing) handChanged.delete(name)
          failures = outcome.refused
          applied = desired.version
          if (outcome.undone.length > 0) reverted(outcome.undone)
        }
        changed()
      }
    } finally {
      running = false
    }
  }

  let current = Promise.resolve()
  function wake() {
    again = true
    if (!running) current = run().catch(() => {})
  }

  return {
    /** A desired state arrived: applied now, or after the run under way. */
    want(desired) {
      if (latest !== null && latest.version === desired.version) return
      latest = desired
      wake()
    },
    /** The watcher saw `module` changed by hand: undone when the desired state decides it. */
    handChange(module) {
      if (latest === null || !decides(latest, module)) return
      handChanged.add(module)
      wake()
    },
    /** What the reports say of the applier. */
    state: () => ({ applied, applying, failures }),
    /** Settles once no run is under way. */
    idle: () => current,
  }
}

/** Whether the desired state decides `module`: its sets, its install or removal, or prune. */
function decides(desired, name) {
  return (
    desired.prune === true ||
    desired.modules.some((module) => module.name === name) ||
    desired.installs.some((entry) => entry.module === name) ||
    desired.removals.includes(name)
  )
}

module.exports = { createApplier, installActionOf, removalsOf, setCallsOf, APPLYING_NOTICE_MS }
