// The shapes of the snapshots of flows over HTTP: the file an upload takes and a download gives,
// a snapshot's metadata, and the diff of two.
import * as v from 'valibot'
import { Time } from './schemas.js'

const ModuleSchema = v.strictObject({
  name: v.pipe(v.string(), v.description('A node module’s name, as npm has it.')),
  version: v.string(),
})

const FlowNodeSchema = v.pipe(
  v.looseObject({
    id: v.pipe(v.string(), v.minLength(1)),
    type: v.pipe(v.string(), v.minLength(1)),
    z: v.optional(v.pipe(v.string(), v.description('The tab or subflow it is on: one of these flows.'))),
  }),
  v.description('A node, tab, subflow, group or config node, with whatever other keys Node-RED gave it.'),
)

/** The file of a snapshot: what `POST /fleet/snapshots` takes and `GET /fleet/snapshots/{id}` gives. */
export const SnapshotFileSchema = v.strictObject({
  name: v.pipe(
    v.string(),
    v.description('1 to 64 letters, digits, `.`, `_` or `-`, starting with a letter or digit.'),
  ),
  modules: v.optional(
    v.pipe(
      v.array(ModuleSchema),
      v.description(
        'The node modules the flows need. Left out, flowadmin names those it knows to provide their types.',
      ),
    ),
  ),
  flows: v.pipe(
    v.array(FlowNodeSchema),
    v.description(
      'Node-RED’s flow JSON, as `GET /flows` of Node-RED’s admin API and node-red-admin give it: ids unique, ' +
        'each `z` one of its tabs or subflows, each `subflow:<id>` type one of its subflows.',
    ),
  ),
})

/**
 * What an upload is read with: the name's form, the flows and the modules are the core's to check,
 * which names the node or module at fault.
 */
export const SnapshotUploadFields = v.object({
  name: v.string('Invalid field: name must be a string'),
  flows: v.unknown(),
  modules: v.optional(v.unknown()),
})

export const SnapshotSchema = v.strictObject({
  id: v.string(),
  name: v.string(),
  version: v.pipe(v.number(), v.integer(), v.description('1, then one more for each snapshot of the name.')),
  modules: v.array(ModuleSchema),
  nodes: v.pipe(v.number(), v.integer(), v.description('Its nodes, tabs, subflows and config nodes.')),
  bytes: v.pipe(v.number(), v.integer(), v.description('The size of its file, as a download gives it.')),
  createdBy: v.pipe(v.nullable(v.string()), v.description('Who made it; null when the API is open.')),
  createdAt: Time,
})

export const SnapshotCreatedSchema = v.strictObject({
  ...SnapshotSchema.entries,
  unknownTypes: v.pipe(
    v.array(v.string()),
    v.description(
      'The types of its flows that neither Node-RED itself nor a module flowadmin knows provides: no module is named for them.',
    ),
  ),
})

const DiffedNodeSchema = v.strictObject({
  id: v.string(),
  type: v.string(),
  z: v.optional(v.string()),
  name: v.optional(v.string()),
})

export const SnapshotDiffSchema = v.strictObject({
  from: v.pipe(v.string(), v.description('The snapshot compared.')),
  to: v.pipe(v.string(), v.description('The snapshot it is compared against (`against`).')),
  added: v.pipe(v.array(DiffedNodeSchema), v.description('Nodes only `to` holds.')),
  removed: v.pipe(v.array(DiffedNodeSchema), v.description('Nodes only `from` holds.')),
  changed: v.pipe(
    v.array(
      v.strictObject({
        ...DiffedNodeSchema.entries,
        keys: v.pipe(v.array(v.string()), v.description('The keys whose values differ, sorted.')),
      }),
    ),
    v.description('Nodes both hold that differ (as `to` has them); the order of keys does not count.'),
  ),
})

/** `POST /fleet/instances/{id}/snapshots`: the name the instance's flows are kept under. */
export const SnapshotAskSchema = v.object({
  name: v.pipe(
    v.string('Invalid field: name must be a string'),
    v.description('1 to 64 letters, digits, `.`, `_` or `-`, starting with a letter or digit.'),
  ),
})

export const SnapshotAskedSchema = v.strictObject({
  instance: v.string(),
  name: v.string(),
  askedBy: v.pipe(v.nullable(v.string()), v.description('Who asked; null when the API is open.')),
  askedAt: Time,
})

/** `POST /fleet/instances/{id}/flows`: the flows an instance runs, under the name it was asked. */
export const SnapshotSentSchema = v.object({
  name: v.pipe(v.string(), v.description('The name its poll said (`snapshot.name`).')),
  flows: SnapshotFileSchema.entries.flows,
})
