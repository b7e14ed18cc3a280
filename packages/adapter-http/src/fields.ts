import { err, ok, type Result } from '@flowadmin/core'
import type { Context } from 'hono'
import * as v from 'valibot'
import { type BodyFormat, type BodyProblem, readBody } from './body.js'
import { adminBodyError, adminError, oauthBodyError, oauthError, toResponse } from './errors.js'
import { firstIssueMessage } from './schemas.js'

/**
 * The fields `schema` reads from a request body, or the answer refusing the request: a body too
 * large (413) or unreadable (400), or fields that do not hold (400 `invalid_request`, naming the
 * first problem). `shape` is the body of that answer: RFC 6749's `{error, error_description}` at
 * the OAuth endpoints, `{code, message}` elsewhere; `noun` names what was missing.
 */
export function parseFields<S extends v.GenericSchema>(
  body: Result<Record<string, unknown>, BodyProblem>,
  schema: S,
  shape: 'oauth' | 'admin',
  noun: 'parameter' | 'field' = shape === 'oauth' ? 'parameter' : 'field',
): Result<v.InferOutput<S>, Response> {
  if (!body.ok)
    return err(toResponse(shape === 'oauth' ? oauthBodyError(body.error) : adminBodyError(body.error)))
  const fields = v.safeParse(schema, body.value)
  if (fields.success) return ok(fields.output)
  const message = firstIssueMessage(fields.issues, noun)
  return err(
    toResponse(
      shape === 'oauth'
        ? oauthError(400, 'invalid_request', message)
        : adminError(400, 'invalid_request', message),
    ),
  )
}

/**
 * The fields of this request's body, read within `limit` bytes as one of `formats` (see readBody),
 * as `schema` reads them; or the answer refusing them (see parseFields).
 */
export const readFields = async <S extends v.GenericSchema>(
  c: Context,
  limit: number,
  formats: readonly BodyFormat[],
  schema: S,
  shape: 'oauth' | 'admin',
  noun?: 'parameter' | 'field',
): Promise<Result<v.InferOutput<S>, Response>> =>
  parseFields(await readBody(c.req.raw, limit, formats, c.env), schema, shape, noun)
