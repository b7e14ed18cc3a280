import { actorOf, type ModuleView, type NodeSetView } from '@flowadmin/core'
import { Hono } from 'hono'
import * as v from 'valibot'
import { requirePermission } from '../auth.js'
import { isMultipart, readBody, readUpload } from '../body.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { adminBodyError, emptyResponse, errorAnswerOf, signedInRefusal, toResponse } from '../errors.js'
import { parseFields, readFields } from '../fields.js'
import { awaitOutcomes } from '../fleet-outcomes.js'
import {
  accessDocs,
  adminErrorContent,
  describe,
  describeTemplates,
  json,
  type Operation,
  use,
} from '../openapi.js'
import { EnableRequestSchema, InstallRequestSchema } from '../schemas.js'
import {
  ENABLE_EXAMPLES,
  MODULE_PARAMETER,
  NodeModule,
  NodeSet,
  parseNodesPath,
  SET_PARAMETER,
} from './nodes-schemas.js'

const notFound = () => emptyResponse(404)

/**
 * `GET|POST /nodes`, `GET|PUT|DELETE /nodes/:module`, `GET|PUT /nodes/:module/:set`.
 */
export function nodesRoutes(deps: RouteDeps): Hono<AppEnv> {
  const modules = deps.core.modules
  const fleet = deps.core.fleet
  // In fleet mode, each answer shows every instance's own state beside the desired one.
  const moduleJson = async (view: ModuleView) => (fleet === null ? view : (await fleet.decorate([view]))[0])
  const setJson = async (view: NodeSetView) => (fleet === null ? view : fleet.decorateSet(view))
  /**
   * A change made: the instances' held polls learn of it now, and in fleet mode the answer waits
   * for the connected instances' outcomes, which it then shows (see awaitOutcomes).
   */
  const changed = async <T extends { ok: boolean }>(
    result: T,
    module: string | null,
    signal: AbortSignal,
  ): Promise<T> => {
    const signals = deps.fleet
    if (!result.ok || signals === undefined) return result
    signals.changes.notify()
    if (fleet !== null && module !== null) await awaitOutcomes(fleet, signals.reports, module, signal)
    return result
  }
  const routes = new Hono<AppEnv>()
  const { needs, guarded } = accessDocs(deps)
  /** `PUT` of a module or of one node set. */
  const enable = (
    summary: string,
    operationId: string,
    [answer, body]: [string, v.GenericSchema],
    parameters: Operation['parameters'],
  ): Operation => ({
    operationId,
    summary,
    description: `${needs('nodes.write')} Setting the state it already has changes nothing. Disabling changes every node set concerned or none.`,
    tags: ['nodes'],
    parameters,
    requestBody: { required: true, content: json(EnableRequestSchema, ENABLE_EXAMPLES) },
    responses: guarded({
      200: { description: `${answer} after the change.`, content: json(body) },
      400: {
        description:
          'The body is not a JSON object with a boolean `enabled` (`invalid_request`), or disabling would ' +
          'remove types the deployed flows use (`type_in_use`, nothing changes).',
        content: adminErrorContent(['invalid_request', 'type_in_use'], true),
      },
      404: use('NotFound'),
      413: use('AdminPayloadTooLarge'),
      503: use('FlowsUnavailable'),
    }),
  })
  const prefix = `${deps.basePath}/nodes/`
  // The router has matched (and partly decoded) the path; `%2F`, `%40` and `%25` are still encoded.
  const targetOf = (path: string) =>
    path.startsWith(prefix) ? parseNodesPath(path.slice(prefix.length)) : null

  routes.get(
    '/nodes',
    describe({
      operationId: 'listNodeSets',
      summary: 'Every node set of every module, sorted by id',
      description: needs('nodes.read'),
      tags: ['nodes'],
      responses: guarded({ 200: { description: 'The node sets.', content: json(v.array(NodeSet)) } }),
    }),
    requirePermission(deps, 'nodes.read'),
    async (c) => {
      const listed = await modules.list()
      const sets =
        fleet === null
          ? listed.flatMap((module) => module.nodes)
          : (await fleet.decorate(listed)).flatMap((module) =>
              module.nodes.map((set) => ({ ...set, decided: module.decided, instances: module.instances })),
            )
      sets.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      return c.json(sets)
    },
  )

  routes.get(
    '/nodes/*',
    describeTemplates({
      '/nodes/{module}': {
        operationId: 'getNodeModule',
        summary: 'A node module',
        description: needs('nodes.read'),
        tags: ['nodes'],
        parameters: [MODULE_PARAMETER],
        responses: guarded({
          200: { description: 'The Node Module object.', content: json(NodeModule) },
          404: use('NotFound'),
        }),
      },
      '/nodes/{module}/{set}': {
        operationId: 'getNodeSet',
        summary: 'One node set of a module',
        description: needs('nodes.read'),
        tags: ['nodes'],
        parameters: [MODULE_PARAMETER, SET_PARAMETER],
        responses: guarded({
          200: { description: 'The node set.', content: json(NodeSet) },
          404: use('NotFound'),
        }),
      },
    }),
    requirePermission(deps, 'nodes.read'),
    async (c) => {
      const target = targetOf(c.req.path)
      if (target === null) return notFound()
      const module = await modules.get(target.module)
      if (!module.ok) return toResponse(errorAnswerOf(module.error))
      if (target.set === null) return c.json(await moduleJson(module.value))
      const set = module.value.nodes.find((candidate) => candidate.name === target.set)
      return set ? c.json(await setJson(set)) : notFound()
    },
  )

  routes.put(
    '/nodes/*',
    describeTemplates({
      '/nodes/{module}': enable(
        'Enable or disable every node set of a module',
        'setNodeModuleEnabled',
        ['The Node Module object', NodeModule],
        [MODULE_PARAMETER],
      ),
      '/nodes/{module}/{set}': enable(
        'Enable or disable one node set',
        'setNodeSetEnabled',
        ['The node set', NodeSet],
        [MODULE_PARAMETER, SET_PARAMETER],
      ),
    }),
    requirePermission(deps, 'nodes.write'),
    async (c) => {
      const target = targetOf(c.req.path)
      if (target === null) return notFound()
      const fields = await readFields(c, deps.maxBodyBytes, ['json'], EnableRequestSchema, 'admin')
      if (!fields.ok) return fields.error

      const { enabled } = fields.value
      const actor = actorOf(c.get('principal'), c.get('address'))
      if (target.set === null) {
        const result = await changed(
          await modules.setModuleEnabled(target.module, enabled, actor),
          target.module,
          c.req.raw.signal,
        )
        return result.ok ? c.json(await moduleJson(result.value)) : toResponse(errorAnswerOf(result.error))
      }
      const result = await changed(
        await modules.setNodeSetEnabled(target.module, target.set, enabled, actor),
        target.module,
        c.req.raw.signal,
      )
      return result.ok ? c.json(await setJson(result.value)) : toResponse(errorAnswerOf(result.error))
    },
  )

  routes.post(
    '/nodes',
    describe({
      operationId: 'installNodeModule',
      summary: 'Install a node module with npm',
      description:
        `${needs('nodes.write')} From the registry (\`version\`: a semver range, the newest without it), ` +
        'from a tarball `url`, or a tarball uploaded as the `tarball` field of a multipart form ' +
        '(only with `externalModules.palette.allowUpload`). A `version` and a `url` together are refused. ' +
        'The settings’ policy is decided before anything is fetched. Its node ' +
        'sets are loaded; a module new to the service starts enabled, one it knows keeps its stored ' +
        'state. A failed install changes nothing. One install or removal runs at a time. In fleet mode, ' +
        'where an install runs the package’s code on every instance, it also needs `installs.write`: an API ' +
        'token only when its scope names it (`*` and `write` do not), a person’s session only within 10 ' +
        'minutes of signing in (then `403 reauthentication_required`).',
      tags: ['nodes'],
      requestBody: {
        required: true,
        content: {
          ...json(InstallRequestSchema, {
            registry: {
              summary: 'From the registry',
              value: { module: 'node-red-contrib-extra', version: '^1.0.0' },
            },
            both: {
              summary: 'A version and a url (400)',
              value: {
                module: 'node-red-contrib-extra',
                version: '1.0.0',
                url: 'https://registry.example/x.tgz',
              },
            },
          }),
          'multipart/form-data': {
            schema: {
              type: 'object' as const,
              required: ['tarball'],
              properties: { tarball: { type: 'string' as const, contentMediaType: 'application/gzip' } },
            },
          },
        },
      },
      responses: guarded({
        200: { description: 'The installed Node Module object.', content: json(NodeModule) },
        400: {
          description:
            'A malformed body, package name, semver range or URL (`invalid_request`); refused by the ' +
            'settings (`module_not_allowed`, nothing fetched); npm failed or the package is not a node ' +
            'module (`install_failed`). Nothing was changed.',
          content: adminErrorContent(['invalid_request', 'module_not_allowed', 'install_failed']),
        },
        ...(deps.core.fleet !== null && {
          403: {
            description:
              'Fleet mode: the session began more than 10 minutes ago (`reauthentication_required`); sign in again.',
            content: adminErrorContent(['reauthentication_required']),
          },
        }),
        409: use('Busy'),
        413: use('AdminPayloadTooLarge'),
        504: use('InstallTimeout'),
      }),
    }),
    requirePermission(deps, 'nodes.write'),
    async (c) => {
      // On the fleet an install is code on every instance: it needs more (see mayInstallOnFleet).
      const may = deps.core.fleet?.mayInstall(c.get('principal'))
      if (may !== undefined && !may.ok) return signedInRefusal(may.error)
      const actor = actorOf(c.get('principal'), c.get('address'))
      if (isMultipart(c.req.raw)) {
        const upload = await readUpload(c.req.raw, deps.maxUploadBytes, 'tarball')
        if (!upload.ok) return toResponse(adminBodyError(upload.error))
        const result = await modules.install({ tarball: upload.value }, actor)
        return result.ok ? c.json(result.value) : toResponse(errorAnswerOf(result.error))
      }
      const fields = parseFields(
        await readBody(c.req.raw, deps.maxBodyBytes, ['json']),
        InstallRequestSchema,
        'admin',
      )
      if (!fields.ok) return fields.error
      const { module, version, url } = fields.value
      const request = url === undefined ? { module, version } : { module, url }
      const result = await changed(await modules.install(request, actor), request.module, c.req.raw.signal)
      return result.ok ? c.json(await moduleJson(result.value)) : toResponse(errorAnswerOf(result.error))
    },
  )

  routes.delete(
    '/nodes/*',
    describeTemplates({
      '/nodes/{module}': {
        operationId: 'removeNodeModule',
        summary: 'Uninstall a node module and forget its stored state',
        description:
          `${needs('nodes.write')} Refused while the deployed flows use any of its types. A module ` +
          'that is known but not installed is only forgotten. A failed removal changes nothing.',
        tags: ['nodes'],
        parameters: [MODULE_PARAMETER],
        responses: guarded({
          204: { description: 'Removed. Empty body.' },
          400: {
            description:
              'The deployed flows use some of its types (`type_in_use`, listed in `types`), removing is not ' +
              'allowed (`module_not_allowed`) or npm failed (`install_failed`). Nothing was changed.',
            content: adminErrorContent(['type_in_use', 'module_not_allowed', 'install_failed'], true),
          },
          404: use('NotFound'),
          409: use('Busy'),
          503: use('FlowsUnavailable'),
          504: use('InstallTimeout'),
        }),
      },
    }),
    requirePermission(deps, 'nodes.write'),
    async (c) => {
      const target = targetOf(c.req.path)
      if (target === null || target.set !== null) return notFound()
      const result = await modules.remove(target.module, actorOf(c.get('principal'), c.get('address')))
      await changed(result, null, c.req.raw.signal)
      return result.ok ? emptyResponse(204) : toResponse(errorAnswerOf(result.error))
    },
  )

  return routes
}
