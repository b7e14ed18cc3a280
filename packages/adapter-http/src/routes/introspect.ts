import type { Introspection } from '@flowadmin/core'
import { Hono } from 'hono'
import * as v from 'valibot'
import { requirePermission } from '../auth.js'
import { basicCredentials } from '../basic-credentials.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { errorAnswerOf, toResponse } from '../errors.js'
import { readFields } from '../fields.js'
import { noStoreJson, noStoreMadeApart } from '../no-store.js'
import {
  clientRefusals,
  describe,
  formOrJson,
  json,
  NO_STORE_HEADERS,
  noStoreTooLarge,
  oauthErrorContent,
  use,
} from '../openapi.js'
import { IntrospectRequestSchema, NullableTime } from '../schemas.js'

/** `POST /auth/introspect` 200 (RFC 7662 §2.2). */
const IntrospectionResponse = v.pipe(
  v.union([
    v.strictObject({ active: v.literal(false) }),
    v.strictObject({
      active: v.literal(true),
      username: v.string(),
      scope: v.pipe(
        v.string(),
        v.description('The token’s rights now (its scope ∩ its user’s permissions), space-separated.'),
      ),
      client_id: v.string(),
      aud: v.pipe(
        v.string(),
        v.description('The token’s audience: always the resource server that asked (RFC 7662 §2.2).'),
      ),
      token_type: v.literal('Bearer'),
      exp: v.optional(
        v.pipe(v.number(), v.integer(), v.description('Seconds since the epoch; absent: never expires.')),
      ),
      iat: v.pipe(v.number(), v.integer()),
      sub: v.string(),
    }),
  ]),
  v.metadata({ ref: 'Introspection' }),
)

const seconds = (ms: number) => Math.floor(ms / 1000)

/** RFC 7662's answer: the token's state, or exactly `{active: false}`. */
export function introspectionJson(answer: Introspection) {
  if (!answer.active) return { active: false as const }
  return {
    active: true as const,
    username: answer.username,
    scope: answer.permissions.join(' '),
    client_id: answer.clientId,
    aud: answer.audience,
    token_type: 'Bearer' as const,
    ...(answer.expiresAt === null ? {} : { exp: seconds(answer.expiresAt) }),
    iat: seconds(answer.issuedAt),
    sub: answer.username,
  }
}

/**
 * `POST /auth/introspect` (RFC 7662) for the resource servers of `adminAuth.resourceServers`, and
 * `GET /auth/resource-servers`: which of them called, for people with `*`. Only when auth is on.
 */
export function introspectRoutes(deps: RouteDeps): Hono<AppEnv> {
  const { core } = deps
  const routes = new Hono<AppEnv>()
  if (!core.authEnabled) return routes

  routes.post(
    '/auth/introspect',
    describe({
      operationId: 'introspectToken',
      summary: 'What a token is worth now (RFC 7662)',
      description:
        'For resource servers (`adminAuth.resourceServers`), authenticated with HTTP Basic `id:secret`. ' +
        'A token that is unknown, expired, revoked, of a removed user, from before a password change, or ' +
        'left with no rights, or whose audience is not the calling resource server (flowadmin’s own tokens, ' +
        'another server’s) is exactly `{"active": false}`: a bad token is never a 4xx. The first call ' +
        'with a secret costs one password verification; later calls with it cost a hash.',
      tags: ['auth'],
      security: [{ basicAuth: [] }],
      requestBody: {
        required: true,
        content: formOrJson(IntrospectRequestSchema, {
          introspect: {
            summary: 'A token to look up',
            value: { token: 'a-token-to-look-up', token_type_hint: 'access_token' },
          },
          missing: { summary: 'No token (400)', value: {} },
        }),
      },
      responses: {
        200: {
          description: 'The token’s state.',
          headers: NO_STORE_HEADERS,
          content: json(IntrospectionResponse, {
            live: {
              summary: 'A live token',
              value: {
                active: true,
                username: 'alice',
                scope: 'flows.read nodes.write',
                client_id: 'node-red',
                aud: 'node-red',
                token_type: 'Bearer',
                exp: 1_798_761_600,
                iat: 1_798_156_800,
                sub: 'alice',
              },
            },
            other: { summary: 'Anything else', value: { active: false } },
          }),
        },
        400: {
          description: 'Another content type, or `token` missing or not a string.',
          headers: NO_STORE_HEADERS,
          content: oauthErrorContent(['invalid_request']),
        },
        413: noStoreTooLarge('oauth'),
        ...clientRefusals('client', NO_STORE_HEADERS),
        500: use('Unexpected'),
        503: use('StorageUnavailable'),
      },
    }),
    noStoreMadeApart,
    async (c) => {
      // The client first: nothing about the request is looked at for an unauthenticated caller.
      const client = basicCredentials(c.req.header('authorization'))
      if (client === null) return toResponse(errorAnswerOf({ code: 'invalid_client' }))
      // Proven before the body is read: an unknown caller's body is never parsed.
      const introspector = await core.introspector(client, deps.clientAddress(c))
      if (!introspector.ok) return toResponse(errorAnswerOf(introspector.error))
      const fields = await readFields(
        c,
        deps.maxBodyBytes,
        ['form', 'json'],
        IntrospectRequestSchema,
        'oauth',
      )
      if (!fields.ok) return fields.error
      const answer = await introspector.value.introspect(fields.value.token)
      // Headers as a plain record: written as they are, without a Headers object (resource
      // servers introspect for every request).
      return noStoreJson(200, introspectionJson(answer))
    },
  )

  routes.get(
    '/auth/resource-servers',
    describe({
      operationId: 'listResourceServers',
      summary: 'The resource servers and their last call',
      description:
        'Every configured resource server with the time it last called this instance (since its start or ' +
        'last reload), null when it has not. Needs `*`.',
      tags: ['auth'],
      responses: {
        200: {
          description: 'The resource servers, by id.',
          content: json(
            v.strictObject({
              resource_servers: v.array(
                v.strictObject({
                  id: v.string(),
                  last_call_at: NullableTime(
                    'When it last called this instance; null: not since start or reload.',
                  ),
                  secret: v.pipe(
                    v.picklist(['digest', 'password_hash']),
                    v.description(
                      'What the settings hold: `digest`, a machine secret’s (`flowadmin secret`); `password_hash`, ' +
                        'a password hash from before them, which five wrong secrets lock out for 15 minutes after each ' +
                        'start or reload: replace it with `flowadmin secret`.',
                    ),
                  ),
                }),
              ),
            }),
          ),
        },
        401: use('Unauthorized'),
        500: use('Unexpected'),
        503: use('StorageUnavailable'),
      },
    }),
    requirePermission(deps, '*'),
    (c) =>
      c.json({
        resource_servers: core.resourceServers.activity().map(({ id, lastCallAt, secret }) => ({
          id,
          last_call_at: lastCallAt === null ? null : new Date(lastCallAt).toISOString(),
          secret,
        })),
      }),
  )

  return routes
}
