'use strict'

// What Node-RED's audit log says about its node modules and flows, as the audit logger sees it
// (when it shares the options object with adminAuth): the fleet agent's watcher looks again at once,
// and names who changed a module by hand. Node-RED 4.1.15 logs (runtime lib/api/nodes.js):
//   nodes.install {module, version}           an install or upgrade (POST /nodes)
//   nodes.remove {module}                      a removal (DELETE /nodes/<module>)
//   nodes.info.set {id: "<module>/<set>", enabled}   a set enabled or disabled
//   nodes.module.set {module, enabled}         a whole module, but only when that fails
//   flows.set {type}                           a deploy (logged as it begins)
// each with `user` (the request's) and `error` when it failed.

/** Events kept, the latest first to go. */
const MAX_KEPT = 200
/** How old an event may be to name who made a change the watcher saw. */
const MATCH_MS = 60_000

/** The action a Node-RED event stands for, or null. */
function actionOf(msg) {
  switch (msg.event) {
    case 'nodes.install':
      return 'install'
    case 'nodes.remove':
      return 'remove'
    case 'nodes.info.set':
    case 'nodes.module.set':
      return msg.enabled === true ? 'enable' : msg.enabled === false ? 'disable' : null
    default:
      return null
  }
}

/** The module an event is about: `module`, or the first part of a set's id. */
function moduleOf(msg) {
  if (typeof msg.module === 'string') return msg.module
  if (typeof msg.id !== 'string') return null
  // `@scope/name/set` or `name/set`
  const parts = msg.id.split('/')
  return parts.length >= 3 && parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? null)
}

function createNodeRedEvents(now = Date.now) {
  /** @type {Array<{action: string, module: string, version: string | null, username: string | null, at: number}>} */
  const kept = []
  const listeners = new Set()
  /** When Node-RED last handed an audit message over (its audit logger is on), or null. */
  let heard = null

  const tell = (what, detail = {}) => {
    for (const listener of listeners) {
      try {
        listener(what, detail)
      } catch {
        // A listener's trouble is its own.
      }
    }
  }

  return {
    /** One of Node-RED's audit messages; never throws (Node-RED's logger calls this). */
    take(msg) {
      try {
        if (msg === null || typeof msg !== 'object' || typeof msg.event !== 'string') return
        heard = now()
        if (msg.event === 'flows.set') {
          // Logged as the deploy begins (runtime lib/api/flows.js), with the request's user.
          const username = typeof msg.user?.username === 'string' ? msg.user.username : null
          return tell('flows', { by: username === '' ? null : username })
        }
        if (!msg.event.startsWith('nodes.') || msg.event.endsWith('.get')) return
        const action = actionOf(msg)
        const module = moduleOf(msg)
        if (action !== null && module !== null && msg.error === undefined) {
          const username = typeof msg.user?.username === 'string' ? msg.user.username : null
          const version = typeof msg.version === 'string' ? msg.version : null
          kept.push({ action, module, version, username, at: now() })
          if (kept.length > MAX_KEPT) kept.shift()
        }
        tell('nodes')
      } catch {
        // Nothing may reach Node-RED's logger.
      }
    },

    /**
     * The latest event of the last minute that did `action` (an upgrade is an install) on `module`:
     * `{username, at}`, or null.
     */
    latest(module, action) {
      const wanted = action === 'upgrade' ? 'install' : action
      const since = now() - MATCH_MS
      for (let i = kept.length - 1; i >= 0; i--) {
        const event = kept[i]
        if (event.at < since) break
        if (event.module === module && event.action === wanted) return event
      }
      return null
    },

    /**
     * Whether Node-RED's audit messages reach this (the helper's audit logger is in its settings,
     * and one came within the last minute; the fleet agent's own readings are audited too).
     */
    hearing() {
      return heard !== null && now() - heard < MATCH_MS
    },

    /**
     * `listener('nodes' | 'flows', detail)` at each such event (a deploy's detail: `{by}`, the
     * user who deployed, or null); returns the unsubscribe.
     */
    subscribe(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
  }
}

module.exports = { createNodeRedEvents }
