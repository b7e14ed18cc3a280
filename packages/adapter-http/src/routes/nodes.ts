import { actorOf } from '@flowadmin/core'
import { Hono } from 'hono'
import * as v from 'valibot'
import { requirePermission } from '../auth.js'
import { isMultipart, readBody, readUpload } from '../body.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { adminBodyError, adminError, emptyResponse, errorAnswerOf, toResponse } from '../errors.js'
import { EnableRequestSchema, firstIssueMessage, InstallRequestSchema } from '../schemas.js'

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

const notFound = () => emptyResponse(404)

/**
 * `GET|POST /nodes`, `GET|PUT|DELETE /nodes/:module`, `GET|PUT /nodes/:module/:set`.
 */
export function nodesRoutes(deps: RouteDeps): Hono<AppEnv> {
  const modules = deps.core.modules
  const routes = new Hono<AppEnv>()
  const prefix = `${deps.basePath}/nodes/`
  // The router has matched (and partly decoded) the path; `%2F`, `%40` and `%25` are still encoded.
  const targetOf = (path: string) =>
    path.startsWith(prefix) ? parseNodesPath(path.slice(prefix.length)) : null

  routes.get('/nodes', requirePermission(deps, 'nodes.read'), async (c) => {
    const sets = (await modules.list()).flatMap((module) => module.nodes)
    sets.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
    return c.json(sets)
  })

  routes.get('/nodes/*', requirePermission(deps, 'nodes.read'), async (c) => {
    const target = targetOf(c.req.path)
    if (target === null) return notFound()
    const module = await modules.get(target.module)
    if (!module.ok) return toResponse(errorAnswerOf(module.error))
    if (target.set === null) return c.json(module.value)
    const set = module.value.nodes.find((candidate) => candidate.name === target.set)
    return set ? c.json(set) : notFound()
  })

  routes.put('/nodes/*', requirePermission(deps, 'nodes.write'), async (c) => {
    const target = targetOf(c.req.path)
    if (target === null) return notFound()
    const body = await readBody(c.req.raw, deps.maxBodyBytes, ['json'], c.env)
    if (!body.ok) return toResponse(adminBodyError(body.error))
    const fields = v.safeParse(EnableRequestSchema, body.value)
    if (!fields.success)
      return toResponse(adminError(400, 'invalid_request', firstIssueMessage(fields.issues, 'field')))

    const { enabled } = fields.output
    const actor = actorOf(c.get('principal'), c.get('address'))
    if (target.set === null) {
      const result = await modules.setModuleEnabled(target.module, enabled, actor)
      return result.ok ? c.json(result.value) : toResponse(errorAnswerOf(result.error))
    }
    const result = await modules.setNodeSetEnabled(target.module, target.set, enabled, actor)
    return result.ok ? c.json(result.value) : toResponse(errorAnswerOf(result.error))
  })

  routes.post('/nodes', requirePermission(deps, 'nodes.write'), async (c) => {
    const actor = actorOf(c.get('principal'), c.get('address'))
    if (isMultipart(c.req.raw)) {
      const upload = await readUpload(c.req.raw, deps.maxUploadBytes, 'tarball')
      if (!upload.ok) return toResponse(adminBodyError(upload.error))
      const result = await modules.install({ tarball: upload.value }, actor)
      return result.ok ? c.json(result.value) : toResponse(errorAnswerOf(result.error))
    }
    const body = await readBody(c.req.raw, deps.maxBodyBytes, ['json'])
    if (!body.ok) return toResponse(adminBodyError(body.error))
    const fields = v.safeParse(InstallRequestSchema, body.value)
    if (!fields.success)
      return toResponse(adminError(400, 'invalid_request', firstIssueMessage(fields.issues, 'field')))
    const { module, version, url } = fields.output
    const request = url === undefined ? { module, version } : { module, url }
    const result = await modules.install(request, actor)
    return result.ok ? c.json(result.value) : toResponse(errorAnswerOf(result.error))
  })

  routes.delete('/nodes/*', requirePermission(deps, 'nodes.write'), async (c) => {
    const target = targetOf(c.req.path)
    if (target === null || target.set !== null) return notFound()
    const result = await modules.remove(target.module, actorOf(c.get('principal'), c.get('address')))
    return result.ok ? emptyResponse(204) : toResponse(errorAnswerOf(result.error))
  })

  return routes
}
