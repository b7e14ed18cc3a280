'use strict'

// A rollout's target as flowadmin sends it (`GET /fleet/instances/{id}/flows/target`), and the
// flows deployed for it: the snapshot's flows with the instance's variables in their
// `global-config` node, as Node-RED's editor keeps its global environment variables.

/** The global-config node added when the flows have none and there are variables. */
const VARIABLES_NODE = 'flowadmin-variables'
/** What Node-RED's editor puts in place of a secret it does not send again. */
const KEPT_SECRET = '__PWRD__'
const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/

const isText = (value) => typeof value === 'string' && value !== ''
const isMode = (value) => value === 'report' || value === 'enforce'

/** Whether a poll's `flows` names a target: `{rollout, snapshot, mode, variables}`. */
function isTargetRef(flows) {
  return (
    flows !== null &&
    typeof flows === 'object' &&
    isText(flows.rollout) &&
    isText(flows.snapshot) &&
    isMode(flows.mode) &&
    typeof flows.variables === 'string'
  )
}

/** Whether `body` is a target: its ref, the flows, the modules and the variables (`env`). */
function isTarget(body) {
  return (
    isTargetRef(body) &&
    Array.isArray(body.flows) &&
    body.flows.every((node) => node !== null && typeof node === 'object' && !Array.isArray(node)) &&
    Array.isArray(body.modules) &&
    body.modules.every(
      (module) => isText(module?.name) && (isText(module.version) || module.version === null),
    ) &&
    Array.isArray(body.env) &&
    body.env.every(
      (entry) =>
        typeof entry?.name === 'string' &&
        NAME.test(entry.name) &&
        typeof entry.value === 'string' &&
        (entry.type === 'str' || entry.type === 'cred'),
    )
  )
}

/**
 * The flows deployed for `flows` and `env`: the variables merged into the flows' global-config
 * node (one with the same name replaced), one added (id `flowadmin-variables`) when the flows have
 * none and there are variables. As the editor deploys it, a secret (`cred`) is `__PWRD__` in the
 * node's `env` and its value goes in the node's `credentials.map` (with `has_<name>`), which
 * Node-RED keeps in its credentials file, never in its flows. Secrets of the snapshot's own that
 * no variable replaces are sent as `__PWRD__`, which keeps what this instance holds for them.
 * `flows` is left as it is.
 */
function withVariables(flows, env) {
  const deployed = [...flows]
  let index = deployed.findIndex((node) => node.type === 'global-config')
  if (index < 0) {
    if (env.length === 0) return deployed
    deployed.push({ id: VARIABLES_NODE, type: 'global-config', env: [], modules: {} })
    index = deployed.length - 1
  }
  const node = { ...deployed[index] }
  const entries = new Map()
  for (const entry of Array.isArray(node.env) ? node.env : []) {
    if (typeof entry?.name === 'string') entries.set(entry.name, { ...entry })
  }
  const secrets = new Map()
  for (const variable of env) {
    if (variable.type === 'cred') {
      entries.set(variable.name, { name: variable.name, value: KEPT_SECRET, type: 'cred' })
      secrets.set(variable.name, variable.value)
    } else {
      entries.set(variable.name, { name: variable.name, value: variable.value, type: 'str' })
    }
  }
  node.env = [...entries.values()]
  const map = {}
  for (const entry of node.env) {
    if (entry.type !== 'cred') continue
    const value = secrets.get(entry.name) ?? KEPT_SECRET
    map[entry.name] = value
    map[`has_${entry.name}`] = value !== ''
  }
  // Always sent: a secret no longer among the variables leaves this instance's credentials file.
  node.credentials = { map }
  deployed[index] = node
  return deployed
}

module.exports = { isTarget, isTargetRef, withVariables, VARIABLES_NODE }
