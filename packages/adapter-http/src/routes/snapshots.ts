import { INSTANCE_ID_FORM, type SnapshotError, type SnapshotMeta } from '@flowadmin/core'
import { Hono } from 'hono'
import * as v from 'valibot'
import { requirePermission, requirePermissionSomewhere } from '../auth.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { adminError, emptyResponse, errorAnswerOf, toResponse } from '../errors.js'
import { readFields } from '../fields.js'
import { ID_PARAMETER as INSTANCE_PARAMETER, INSTANCE_REFUSALS, instanceCaller } from '../fleet-caller.js'
import { noStore } from '../no-store.js'
import { adminErrorContent, describe, json, use } from '../openapi.js'
import {
  SnapshotAskedSchema,
  SnapshotAskSchema,
  SnapshotCreatedSchema,
  SnapshotDiffSchema,
  SnapshotFileSchema,
  SnapshotSchema,
  SnapshotSentSchema,
  SnapshotUploadFields,
} from '../snapshot-schemas.js'

const metaJson = (meta: SnapshotMeta) => ({ ...meta, createdAt: new Date(meta.createdAt).toISOString() })

/**
 * How many times a snapshot's bound an upload's body may be: room for the formatting of a file
 * kept in git (indented, one key a line). What counts against the bound is the snapshot's file.
 */
export const UPLOAD_ROOM = 4

const ID_PARAMETER = {
  name: 'id',
  in: 'path' as const,
  required: true,
  description: 'A snapshot’s id: 16 letters, digits, `-` or `_`; any other is no snapshot’s (404).',
  schema: { type: 'string' as const },
}
const ANSWERS = { 401: use('Unauthorized'), 500: use('Unexpected'), 503: use('StorageUnavailable') }
const NOT_FOUND = { description: 'No such snapshot.', content: adminErrorContent(['snapshot_not_found']) }
const REFUSED_FLOWS = {
  400: {
    description: 'A malformed body, name, node or module, named.',
    content: adminErrorContent(['invalid_request']),
  },
  413: {
    description: 'The body, or the snapshot’s file, is larger than the bound.',
    content: adminErrorContent(['payload_too_large']),
  },
}

/** A refused snapshot: a malformed request in the admin routes' shape, anything else as mapped. */
const refusal = (error: SnapshotError): Response =>
  toResponse(
    error.code === 'invalid_request'
      ? adminError(400, 'invalid_request', error.message)
      : errorAnswerOf(error, { tokenSent: true }),
  )

/**
 * The snapshots of flows: `POST /fleet/snapshots` (an upload: `flows.write` on flowadmin, audited),
 * `GET /fleet/snapshots` (metadata), `GET /fleet/snapshots/{id}` (the file) and
 * `GET /fleet/snapshots/{id}/diff?against=` (`flows.read` on flowadmin). In fleet mode.
 */
export function snapshotRoutes(deps: RouteDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  const fleet = deps.core.fleet
  if (fleet === null) return routes
  const { snapshots } = fleet

  routes.post(
    '/fleet/snapshots',
    describe({
      operationId: 'createFlowSnapshot',
      summary: 'Make a snapshot of flows',
      description:
        'Needs `flows.write` on flowadmin. Keeps the flows, under their name, as the next version of that name (1 for ' +
        'a new name), with the node modules they need: those the file names, or else those the fleet knows to ' +
        'provide their types (the decided modules first, then those instances report; Node-RED’s own types need ' +
        'none). Never changed afterwards. The snapshot’s file may have `fleet.snapshots.maxBytes` bytes; the body ' +
        `may be ${UPLOAD_ROOM} times that, for its formatting. Audited as \`fleet.snapshot_created\`.`,
      tags: ['fleet'],
      requestBody: { required: true, content: json(v.object(SnapshotFileSchema.entries)) },
      responses: {
        201: { description: 'Made. Its metadata.', content: json(SnapshotCreatedSchema) },
        ...REFUSED_FLOWS,
        ...ANSWERS,
      },
    }),
    requirePermission(deps, 'flows.write'),
    async (c) => {
      const limit = snapshots.maxBytes * UPLOAD_ROOM
      const fields = await readFields(c, limit, ['json'], SnapshotUploadFields, 'admin')
      if (!fields.ok) return fields.error
      const made = await snapshots.create(c.get('principal'), fields.value, c.get('address'))
      if (!made.ok) return refusal(made.error)
      const { unknownTypes, ...meta } = made.value
      return c.json({ ...metaJson(meta), unknownTypes }, 201)
    },
  )

  routes.get(
    '/fleet/snapshots',
    describe({
      operationId: 'listFlowSnapshots',
      summary: 'The snapshots of flows',
      description:
        'Needs `flows.read` on flowadmin or on a group of instances. Every snapshot’s metadata, without its flows.',
      tags: ['fleet'],
      responses: {
        200: { description: 'By name, then version.', content: json(v.array(SnapshotSchema)) },
        ...ANSWERS,
      },
    }),
    requirePermissionSomewhere(deps, 'flows.read'),
    async (c) => c.json((await snapshots.list()).map(metaJson)),
  )

  routes.get(
    '/fleet/snapshots/:id',
    describe({
      operationId: 'downloadFlowSnapshot',
      summary: 'Download a snapshot of flows',
      description:
        'Needs `flows.read` on flowadmin or on a group of instances. Its file, as `POST /fleet/snapshots` takes it: one module and one node a ' +
        'line, so that two files compare line by line. Named `<name>-v<version>.json`.',
      tags: ['fleet'],
      parameters: [ID_PARAMETER],
      responses: {
        200: {
          description: 'The file.',
          headers: {
            'Content-Disposition': {
              description: '`attachment; filename="<name>-v<version>.json"`',
              schema: { type: 'string' },
            },
          },
          content: json(SnapshotFileSchema),
        },
        404: NOT_FOUND,
        ...ANSWERS,
      },
    }),
    requirePermissionSomewhere(deps, 'flows.read'),
    async (c) => {
      const read = await snapshots.file(c.req.param('id'))
      if (!read.ok) return toResponse(errorAnswerOf(read.error))
      const { meta, file } = read.value
      return c.body(file, 200, {
        'Content-Type': 'application/json',
        'Content-Disposition': `attachment; filename="${meta.name}-v${meta.version}.json"`,
      })
    },
  )

  routes.get(
    '/fleet/snapshots/:id/diff',
    describe({
      operationId: 'diffFlowSnapshots',
      summary: 'Compare two snapshots of flows',
      description:
        'Needs `flows.read` on flowadmin or on a group of instances. The nodes added, removed and changed from this snapshot to `against`, ' +
        'matched by id; two nodes whose keys hold the same values in another order are the same.',
      tags: ['fleet'],
      parameters: [
        ID_PARAMETER,
        {
          name: 'against',
          in: 'query',
          required: true,
          description: 'The id of the snapshot to compare with.',
          schema: { type: 'string' },
        },
      ],
      responses: {
        200: { description: 'The nodes that differ.', content: json(SnapshotDiffSchema) },
        400: { description: 'No `against`.', content: adminErrorContent(['invalid_request']) },
        404: NOT_FOUND,
        ...ANSWERS,
      },
    }),
    requirePermissionSomewhere(deps, 'flows.read'),
    async (c) => {
      const from = c.req.param('id')
      const against = c.req.query('against')
      if (against === undefined || against === '')
        return toResponse(adminError(400, 'invalid_request', 'Missing required parameter: against'))
      const diff = await snapshots.diff(from, against)
      if (!diff.ok) return toResponse(errorAnswerOf(diff.error))
      return c.json({ from, to: against, ...diff.value })
    },
  )

  routes.post(
    '/fleet/instances/:id/snapshots',
    describe({
      operationId: 'askFlowSnapshot',
      summary: 'Ask an instance for the flows it runs',
      description:
        'Needs `flows.write` and `flows.read` on flowadmin. The instance’s next poll (within the `fleet.hold` ' +
        'setting’s seconds while it is connected) asks its helper to read the flows it runs (Node-RED’s own ' +
        '`GET /flows`) and send them; they are kept as the next version of `name`, made by the caller. An earlier ' +
        'ask of the same instance not yet answered is replaced. Audited as `fleet.snapshot_asked`, then ' +
        '`fleet.snapshot_created` (or `fleet.snapshot_refused`).',
      tags: ['fleet'],
      parameters: [INSTANCE_PARAMETER],
      requestBody: { required: true, content: json(SnapshotAskSchema) },
      responses: {
        202: { description: 'Asked.', content: json(SnapshotAskedSchema) },
        400: {
          description: 'A malformed instance id or name.',
          content: adminErrorContent(['invalid_request']),
        },
        404: { description: 'The fleet knows no such instance. Empty body.' },
        ...ANSWERS,
      },
    }),
    requirePermission(deps, ['flows.write', 'flows.read']),
    async (c) => {
      const id = c.req.param('id')
      if (!INSTANCE_ID_FORM.test(id))
        return toResponse(
          adminError(
            400,
            'invalid_request',
            'id: 1 to 128 letters, digits, ".", "_" or "-", starting with a letter or digit',
          ),
        )
      const fields = await readFields(c, deps.maxBodyBytes, ['json'], SnapshotAskSchema, 'admin')
      if (!fields.ok) return fields.error
      const asked = await snapshots.ask(c.get('principal'), id, fields.value.name, c.get('address'))
      if (!asked.ok) return refusal(asked.error)
      if (asked.value === null) return emptyResponse(404)
      const { instance, name, by, at } = asked.value
      return c.json({ instance, name, askedBy: by, askedAt: new Date(at).toISOString() }, 202)
    },
  )

  routes.post(
    '/fleet/instances/:id/flows',
    describe({
      operationId: 'sendFlowSnapshot',
      summary: 'An instance sends the flows it runs, as asked',
      description:
        'For the fleet’s instances, authenticated as their resource server with HTTP Basic: the flows its ' +
        'Node-RED runs (its `GET /flows`), under the name its poll said (`snapshot.name`). Kept as a snapshot made ' +
        'by whoever asked; the ask is spent, also when the flows are refused, a body too large too (audited as ' +
        '`fleet.snapshot_refused`). An ask not answered within 10 minutes is dropped.',
      tags: ['fleet'],
      security: [{ basicAuth: [] }],
      parameters: [INSTANCE_PARAMETER],
      requestBody: { required: true, content: json(SnapshotSentSchema) },
      responses: {
        201: { description: 'Kept. Its metadata.', content: json(SnapshotCreatedSchema) },
        ...REFUSED_FLOWS,
        409: {
          description:
            'Nobody asked for these flows (or they were sent already), or the id is another resource server’s instance.',
          content: adminErrorContent(['snapshot_not_asked', 'instance_conflict']),
        },
        ...INSTANCE_REFUSALS,
      },
    }),
    noStore,
    instanceCaller(deps),
    async (c) => {
      const caller = c.get('instance')
      const sender = { instance: caller.id, client: caller.identity.clientId, address: deps.clientAddress(c) }
      const limit = snapshots.maxBytes * UPLOAD_ROOM
      const fields = await readFields(c, limit, ['json'], SnapshotUploadFields, 'admin')
      if (!fields.ok) {
        // Flows too large to read spend the ask: sent again, they would be again.
        if (fields.error.status === 413) await snapshots.tooLarge(sender, limit)
        return fields.error
      }
      const { name, flows } = fields.value
      const made = await snapshots.fromInstance(sender, { name, flows })
      if (!made.ok) return refusal(made.error)
      const { unknownTypes, ...meta } = made.value
      return c.json({ ...metaJson(meta), unknownTypes }, 201)
    },
  )

  return routes
}
