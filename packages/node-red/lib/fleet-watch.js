'use strict'

const { AGENT_USER } = require('./agent-token')
const { onceEach } = require('./timing')

// The fleet agent's watcher: reads its own Node-RED's modules (GET /nodes) every second and the
// types its flows use (GET /flows) every five, both at once when the audit logger sees Node-RED
// change a module or deploy. A difference from the last state it knew that the agent did not make
// is a hand change: told to flowadmin (`changes`), with who made it when Node-RED's audit log says.

const NODES_EVERY_MS = 1000
const FLOWS_EVERY_MS = 5000
/**
 * Node-RED audits an install or a removal once its admin API answers, after the module is seen
 * (a removal unloads it first, then runs npm): while its audit reaches the helper, such a change
 * is told once its event names who made it, or after this long without one.
 */
const ATTRIBUTION_MS = 60_000
/** The changes Node-RED always audits when they succeed (a whole module's flags are not). */
const AUDITED = new Set(['install', 'upgrade', 'remove'])

/**
 * The hand changes between what a module was (`before`) and is (`after`), either undefined when
 * it was not or is not installed: `{action, version?}` each.
 */
function differences(before, after) {
  if (before === undefined && after === undefined) return []
  if (before === undefined) return [{ action: 'install', version: after.version }]
  if (after === undefined) return [{ action: 'remove' }]
  const found = []
  if (after.pendingVersion !== undefined && after.pendingVersion !== before.pendingVersion) {
    found.push({ action: 'upgrade', version: after.pendingVersion })
  } else if (after.version !== before.version) {
    found.push({ action: 'upgrade', version: after.version })
  }
  const was = new Map(before.sets.map((set) => [set.name, set.enabled]))
  const flipped = after.sets.filter((set) => was.has(set.name) && was.get(set.name) !== set.enabled)
  if (flipped.some((set) => set.enabled)) found.push({ action: 'enable' })
  if (flipped.some((set) => !set.enabled)) found.push({ action: 'disable' })
  return found
}

/**
 * @param {object} parts
 * @param {ReturnType<import('./local-admin').createLocalAdmin>} parts.local
 * @param {ReturnType<import('./node-red-events').createNodeRedEvents>} parts.events
 * @param {ReturnType<import('./timing').createStopper>} parts.stopper
 * @param {() => void} parts.changed what it read changed (a report may be due)
 * @param {(changes: object[]) => void} parts.handChanges
 * @param {(line: string) => void} parts.log
 * @param {() => number} [parts.now]
 */
function createWatcher({ local, events, stopper, changed, handChanges, log, now = Date.now }) {
  const trouble = onceEach(log)
  /** The modules as last known, by name: what the agent made them, or what it saw. */
  let known = null
  let modules = null
  let typesInUse = null
  let nodeRedVersion = null
  let versionAsked = false
  /** Modules the applier is changing: not compared until it settles them. */
  const held = new Set()
  /** Modules whose settling read found no answer: settled by the next good one. */
  const owed = new Set()
  let reads = 0
  /** A reading begun before this one (a settle) may be stale: it is left alone. */
  let settledAt = 0
  let nudged = false
  let flowsDue = true
  let wake = null
  const answered = []
  /** Changes seen before Node-RED's audit of them, by module and action: told once it came. */
  const unnamed = new Map()

  /** The unnamed changes whose event came (or whose wait is over), as changes to tell. */
  function named() {
    const found = []
    for (const [key, change] of unnamed) {
      const event = events.latest(change.module, change.action)
      if (event === null && now() < change.until) continue
      unnamed.delete(key)
      if (event?.username === AGENT_USER) continue
      const { until: _until, ...rest } = change
      found.push({ ...rest, by: event?.username ?? null, ...(event !== null && { at: event.at }) })
    }
    return found
  }

  /** One reading of GET /nodes; `settle` names held modules it takes as they are. */
  async function readNodes(settle = []) {
    reads += 1
    const ticket = reads
    const reading = await local.modules()
    if (reading === null) {
      for (const name of settle) owed.add(name)
      return
    }
    for (const listener of answered.splice(0)) listener()
    if (ticket < settledAt) return
    const settling = [...settle, ...owed]
    if (settling.length > 0) settledAt = ticket
    owed.clear()
    modules = reading
    if (known === null) {
      known = new Map(reading)
      changed()
      return
    }
    for (const name of settling) {
      held.delete(name)
      const module = reading.get(name)
      if (module === undefined) known.delete(name)
      else known.set(name, module)
    }
    const found = []
    for (const name of new Set([...known.keys(), ...reading.keys()])) {
      if (held.has(name) || settling.includes(name)) continue
      const before = known.get(name)
      const after = reading.get(name)
      const differing = differences(before, after)
      if (after === undefined) known.delete(name)
      else known.set(name, after)
      for (const difference of differing) {
        const event = events.latest(name, difference.action)
        // The agent's own change, seen before it settled it.
        if (event?.username === AGENT_USER) continue
        if (event === null && AUDITED.has(difference.action) && events.hearing?.()) {
          unnamed.set(`${name}\n${difference.action}`, {
            module: name,
            action: difference.action,
            ...(difference.version !== undefined && { version: difference.version }),
            at: now(),
            until: now() + ATTRIBUTION_MS,
          })
          continue
        }
        found.push({
          module: name,
          action: difference.action,
          ...(difference.version !== undefined && { version: difference.version }),
          by: event?.username ?? null,
          at: event?.at ?? now(),
        })
      }
    }
    found.push(...named())
    if (found.length > 0) handChanges(found)
    changed()
  }

  async function readFlows() {
    const types = await local.typesInUse()
    if (types === null) return false
    if (JSON.stringify(types) !== JSON.stringify(typesInUse)) {
      typesInUse = types
      changed()
    }
    return true
  }

  async function run() {
    const unsubscribe = events.subscribe((what) => {
      if (what === 'flows') flowsDue = true
      nudged = true
      wake?.()
    })
    let flowsAt = 0
    try {
      while (!stopper.stopped) {
        nudged = false
        try {
          if (flowsDue || now() - flowsAt >= FLOWS_EVERY_MS) {
            flowsDue = false
            // Its version is asked until Node-RED says it; the first report waits for the first answer.
            if (nodeRedVersion === null) {
              nodeRedVersion = await local.nodeRedVersion()
              versionAsked = true
              if (nodeRedVersion !== null) changed()
            }
            if (await readFlows()) flowsAt = now()
          }
          await readNodes()
        } catch (error) {
          trouble.say(
            `fleet: watching Node-RED failed unexpectedly (${String(error?.message ?? error).split('\n')[0]}): tried again`,
          )
        }
        if (nudged || stopper.stopped) continue
        await Promise.race([
          stopper.sleep(NODES_EVERY_MS),
          new Promise((resolve) => {
            wake = resolve
          }),
        ])
        wake = null
      }
    } finally {
      unsubscribe()
    }
  }

  return {
    run,
    /** The applier is about to change `module`. */
    hold(module) {
      held.add(module)
    },
    /** The applier is done: the held modules are taken as Node-RED has them now. */
    settle() {
      return held.size === 0 ? Promise.resolve() : readNodes([...held])
    },
    /** `listener()` at the next reading Node-RED answered. */
    onceAnswered(listener) {
      answered.push(listener)
    },
    /** What the reports say of this Node-RED, or null before its modules and flows were read. */
    facts() {
      if (modules === null || typesInUse === null || !versionAsked) return null
      return { nodeRedVersion: nodeRedVersion ?? 'unknown', modules: [...modules.values()], typesInUse }
    },
  }
}

module.exports = { createWatcher, differences }
