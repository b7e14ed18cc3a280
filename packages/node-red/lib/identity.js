'use strict'

// This instance's fleet id, once the agent knows it (the instanceId option, or the id kept in the
// userDir, which is known once Node-RED's settings are found): the audit logger files its events
// under it, so the trail and the fleet name the instance alike.

function createIdentity() {
  let id = null
  let settled = false
  const listeners = new Set()
  return {
    /** The fleet id, or null: not known yet, or fleet mode is off. */
    get id() {
      return id
    },
    /** Whether the id is known, or will never be (fleet mode stopped before). */
    get settled() {
      return settled
    },
    /** Known now (an id), or never (null). Once. */
    settle(value) {
      if (settled) return
      settled = true
      id = value
      for (const listener of listeners) {
        try {
          listener(value)
        } catch {
          // A listener's trouble is its own.
        }
      }
      listeners.clear()
    },
    /** Calls `listener(id)` once it is settled (at once when it is). */
    onSettled(listener) {
      if (settled) listener(id)
      else listeners.add(listener)
    },
  }
}

module.exports = { createIdentity }
