'use strict'

// Which nodes of a deployed snapshot lack the credentials their type defines on this instance.
//
// Read inside the process, from Node-RED's own credential store (@node-red/runtime
// lib/nodes/credentials.js: `getDefinition(type)`, the credentials a type registered, and
// `get(id)`, what a node holds), which this helper shares a process with. The admin API cannot
// tell it: `GET /credentials/:type/:id` answers `{}` both for a type that defines no credentials
// and for a node that holds none, it answers text credentials in clear, and each call is an
// audit event (one per node, at every deploy). The store is found among the modules Node-RED
// loaded (require.cache), whatever folder Node-RED runs from; when it is not there (Node-RED runs
// in another process), none is named, and the log says once that it cannot be told.

const STORE_FILE = /[\\/]@node-red[\\/]runtime[\\/]lib[\\/]nodes[\\/]credentials\.js$/

/** Node-RED's credential store in this process, or null. */
function credentialStore(cache = require.cache) {
  try {
    for (const [file, loaded] of Object.entries(cache ?? {})) {
      if (!STORE_FILE.test(file)) continue
      const store = loaded?.exports
      if (typeof store?.get === 'function' && typeof store.getDefinition === 'function') return store
    }
  } catch {
    // None to be found.
  }
  return null
}

const isHeld = (value) => value !== undefined && value !== null && value !== ''

/**
 * The ids of the nodes of `flows` whose type defines credentials and that hold none of them here,
 * or null when Node-RED's store is not in this process.
 */
function missingCredentialsOf(flows, store = credentialStore()) {
  if (store === null) return null
  const missing = []
  for (const node of Array.isArray(flows) ? flows : []) {
    if (typeof node?.id !== 'string' || typeof node.type !== 'string') continue
    let definition
    let held
    try {
      // Node-RED registers a type's credentials under its name with spaces as dashes.
      definition = store.getDefinition(node.type.replace(/\s+/g, '-'))
      held = store.get(node.id)
    } catch {
      continue
    }
    if (definition === null || typeof definition !== 'object') continue
    const fields = Object.keys(definition)
    if (fields.length === 0) continue
    if (held === null || typeof held !== 'object' || !fields.some((field) => isHeld(held[field]))) {
      missing.push(node.id)
    }
  }
  return missing
}

module.exports = { credentialStore, missingCredentialsOf }
