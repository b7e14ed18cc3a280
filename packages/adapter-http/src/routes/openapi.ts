import { type Context, Hono } from 'hono'
import * as v from 'valibot'
import type { AppEnv, RouteDeps } from '../env.js'
import { createOpenApiDocument, describe, json, type OpenApiDocument, type RoutesOf } from '../openapi.js'

export type { RoutesOf }

/** What a client may rely on in the served document; the rest is OpenAPI 3.1. */
const OpenApiDocumentSchema = v.pipe(
  v.looseObject({
    openapi: v.pipe(v.string(), v.regex(/^3\.1\./)),
    info: v.looseObject({ title: v.string(), version: v.string() }),
    paths: v.looseObject({}),
  }),
  v.metadata({ ref: 'OpenApiDocument' }),
)

/** `GET /openapi.json`: the document of `api` (all of the app's routes), generated once, on first use. */
export function openApiRoutes(deps: RouteDeps, api: () => RoutesOf): Hono<AppEnv> {
  let document: Promise<OpenApiDocument> | undefined
  return new Hono<AppEnv>().get(
    '/openapi.json',
    describe({
      operationId: 'getOpenApiDocument',
      summary: 'This document',
      tags: ['meta'],
      security: [],
      responses: {
        200: { description: 'The OpenAPI document.', content: json(OpenApiDocumentSchema) },
      },
    }),
    async (c: Context) => {
      document ??= createOpenApiDocument(api(), deps)
      return c.json(await document)
    },
  )
}
