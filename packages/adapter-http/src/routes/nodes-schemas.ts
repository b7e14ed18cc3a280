import * as v from 'valibot'
import { DriftSchema } from '../fleet-schemas.js'

// What the node routes read and show: a module's (and node set's) name in the path, the Node
// Module and node set objects, the path parameters as the document shows them.

// Matched against the decoded rest of the path. A scoped name holds a slash, which the router
// cannot express, and may arrive as `%2F`, so these routes parse the path themselves.
const MODULE_PATH = /^((?:@[^/]+\/)?[^/]+)$/
const SET_PATH = /^((?:@[^/]+\/)?[^/]+)\/([^/]+)$/

export interface NodesTarget {
  module: string
  /** null: the whole module. */
  set: string | null
}

/**
 * The module (and node set) named by the path after `/nodes/`, decoded once. Accepts `name`,
 * `@scope/name`, each optionally followed by `/set`; `/`, `@` and any other character may be
 * percent-encoded. Null for anything else.
 */
export function parseNodesPath(rest: string): NodesTarget | null {
  let decoded: string
  try {
    decoded = decodeURIComponent(rest)
  } catch {
    return null
  }
  const module = MODULE_PATH.exec(decoded)
  if (module) return { module: module[1] as string, set: null }
  const set = SET_PATH.exec(decoded)
  if (set) return { module: set[1] as string, set: set[2] as string }
  return null
}

/** In fleet mode, each instance's own state of a module beside the desired one. */
const InstanceStates = v.optional(
  v.pipe(
    v.array(
      v.strictObject({
        id: v.string(),
        connected: v.boolean(),
        version: v.optional(v.pipe(v.string(), v.description('Absent while it is not installed there.'))),
        enabled: v.pipe(v.record(v.string(), v.boolean()), v.description('Each node set’s state there.')),
        drift: v.optional(DriftSchema),
      }),
    ),
    v.description(
      'Fleet mode only: each instance that has the module (or is to install it), with its own state and ' +
        'its drift from the desired state. `enabled` above is the desired state.',
    ),
  ),
)

/** In fleet mode, whether an operator decided the module. */
const Decided = v.optional(
  v.pipe(
    v.boolean(),
    v.description(
      'Fleet mode only: false for a module the instances report that no operator decided. It is not in the ' +
        'desired state; `enabled` shows true when every instance that has it has it enabled. Enabling or ' +
        'disabling it decides it.',
    ),
  ),
)

/** A node set as the API shows it. */
export const NodeSet = v.pipe(
  v.strictObject({
    id: v.pipe(v.string(), v.description('`<module>/<set name>`')),
    name: v.string(),
    types: v.array(v.string()),
    enabled: v.boolean(),
    loaded: v.pipe(v.boolean(), v.description('Whether this process has loaded the set’s files.')),
    module: v.string(),
    version: v.pipe(v.string(), v.description('The module’s version.')),
    err: v.optional(v.pipe(v.string(), v.description('Why loading failed; present only then.'))),
    decided: Decided,
    instances: InstanceStates,
  }),
  v.metadata({ ref: 'NodeSet' }),
)

/** The Node Module object. */
export const NodeModule = v.pipe(
  v.strictObject({
    name: v.string(),
    version: v.string(),
    nodes: v.array(NodeSet),
    decided: Decided,
    instances: InstanceStates,
  }),
  v.metadata({ ref: 'NodeModule' }),
)

/** A required path parameter: a string matching `pattern`, with examples named as in ENABLE_EXAMPLES. */
const pathParameter = (
  name: string,
  description: string,
  pattern: string,
  examples: Record<'plain' | 'scoped' | 'unknown', { summary: string; value: string }>,
) => ({
  name,
  in: 'path' as const,
  required: true,
  description,
  schema: { type: 'string' as const, pattern },
  examples,
})

// The path parameters as {@link parseNodesPath} reads them; a scoped name's slash may be `%2F`.
export const MODULE_PARAMETER = pathParameter(
  'module',
  'A package name, plain (`node-red-node-random`) or scoped (`@scope/name`). The slash of a ' +
    'scoped name may be sent as it is or as `%2F`. Case-sensitive.',
  '^(@[^/]+/[^/]+|[^@/][^/]*)$',
  {
    plain: { summary: 'A plain name', value: 'node-red-node-random' },
    scoped: { summary: 'A scoped name', value: '@acme/flow-kit' },
    unknown: { summary: 'No such module (404)', value: 'no-such-module' },
  },
)
export const SET_PARAMETER = pathParameter('set', 'The name of one of the module’s node sets.', '^[^/]+$', {
  plain: { summary: 'The set of the plain module', value: 'random' },
  scoped: { summary: 'A set of the scoped module', value: 'beta' },
  unknown: { summary: 'No such set (404)', value: 'nope' },
})

export const ENABLE_EXAMPLES = {
  plain: { summary: 'Disable', value: { enabled: false } },
  scoped: { summary: 'Enable', value: { enabled: true } },
  unknown: { summary: 'Disable', value: { enabled: false } },
}
