import type { InstanceCaller } from '@flowadmin/core'
import { createMiddleware } from 'hono/factory'
import { basicCredentials } from './basic-credentials.js'
import type { AppEnv, RouteDeps } from './env.js'
import { adminError, errorAnswerOf, toResponse } from './errors.js'
import { INSTANCE_ID } from './fleet-schemas.js'
import { adminErrorContent, clientRefusals, type Responses, use } from './openapi.js'

/** The variables an instance's request sets for its handler. */
export type InstanceEnv = AppEnv & { Variables: { instance: InstanceCaller } }

/** The `{id}` path parameter of an instance's routes. */
export const ID_PARAMETER = {
  name: 'id',
  in: 'path' as const,
  required: true,
  description:
    'The instance’s id (its enrolled id, its helper’s `instanceId`, or the one it keeps in its userDir).',
  schema: { type: 'string' as const, pattern: INSTANCE_ID.source },
}

/** What an instance's own request may be refused, besides a malformed id (400): see `instanceCaller`. */
export const INSTANCE_REFUSALS: Responses = {
  ...clientRefusals('resource server'),
  403: {
    description:
      'The credential is another instance’s (an enrolled instance acts only as itself; the shared secret never as an enrolled or revoked one). Audited as `fleet.instance_mismatch`.',
    content: adminErrorContent(['instance_mismatch']),
  },
  409: {
    description: 'The id is another resource server’s instance.',
    content: adminErrorContent(['instance_conflict']),
  },
  500: use('Unexpected'),
  503: use('StorageUnavailable'),
}

/**
 * An instance's own request: its credential (HTTP Basic: an enrolled instance's own, or its
 * resource server's shared secret; the server marked for the fleet) authenticated, then the id the
 * path names checked against it. Sets `instance` for the handler, or answers the refusal.
 */
export function instanceCaller(deps: RouteDeps) {
  return createMiddleware<InstanceEnv>(async (c, next) => {
    const fleet = deps.core.fleet
    const client = basicCredentials(c.req.header('authorization'))
    // As the router decoded it; anything but the id's characters is refused below.
    const id = c.req.param('id') ?? ''
    if (fleet === null || client === null) return toResponse(errorAnswerOf({ code: 'invalid_client' }))
    const address = deps.clientAddress(c)
    const identity = await fleet.identities.authenticateClient(client, address)
    if (!identity.ok) return toResponse(errorAnswerOf(identity.error))
    if (!INSTANCE_ID.test(id))
      return toResponse(
        adminError(
          400,
          'invalid_request',
          'The instance id must be 1 to 128 letters, digits, ".", "_" or "-"',
        ),
      )
    const caller = await fleet.identities.callerOf(identity.value, id, address)
    if (!caller.ok) return toResponse(errorAnswerOf(caller.error))
    c.set('instance', caller.value)
    await next()
  })
}
