import { err, ok, type Result } from '@flowadmin/core'

/** The body formats a route accepts. */
export type BodyFormat = 'json' | 'form'

/** Why a request body was refused; each route turns it into its own error shape. */
export type BodyProblem = { problem: 'too_large'; limit: number } | { problem: 'invalid'; message: string }

const MEDIA_TYPES: Record<BodyFormat, string> = {
  json: 'application/json',
  form: 'application/x-www-form-urlencoded',
}

const invalid = (message: string): { ok: false; error: BodyProblem } => err({ problem: 'invalid', message })

/** `application/json; charset=utf-8` -> `application/json`. Parameters are allowed and ignored. */
function mediaTypeOf(header: string | null): string | null {
  if (header === null) return null
  return (header.split(';')[0] ?? '').trim().toLowerCase()
}

/**
 * Reads at most `limit` bytes. The limit is enforced on the bytes actually read, whatever
 * Content-Length claims; a declared length over the limit is refused without reading.
 * 'incomplete': the body stream failed, i.e. the client went away before sending all of it.
 */
async function readLimited(request: Request, limit: number): Promise<Uint8Array | null | 'incomplete'> {
  const declared = Number(request.headers.get('Content-Length') ?? 0)
  if (Number.isFinite(declared) && declared > limit) return null
  if (request.body === null) return new Uint8Array(0)
  const reader = request.body.getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  for (;;) {
    let read: ReadableStreamReadResult<Uint8Array>
    try {
      read = await reader.read()
    } catch {
      return 'incomplete'
    }
    const { done, value } = read
    if (done) break
    size += value.byteLength
    if (size > limit) {
      await reader.cancel().catch(() => {})
      return null
    }
    chunks.push(value)
  }
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}

function parseJson(text: string): Result<Record<string, unknown>, BodyProblem> {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return invalid('Malformed JSON body')
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return invalid('Request body must be a JSON object')
  }
  return ok(value as Record<string, unknown>)
}

function parseForm(text: string): Result<Record<string, unknown>, BodyProblem> {
  const fields: Record<string, string> = Object.create(null)
  let repeated: string | null = null
  new URLSearchParams(text).forEach((value, name) => {
    if (Object.hasOwn(fields, name)) repeated ??= name
    fields[name] = value
  })
  if (repeated !== null)
    return invalid(`Parameter given more than once: ${(repeated as string).slice(0, 64)}`)
  return ok(fields)
}

/**
 * Reads and parses a request body as one of `formats`, by its Content-Type. Returns the fields as
 * an object (form fields are strings); shapes are validated by the caller.
 */
export async function readBody(
  request: Request,
  limit: number,
  formats: readonly BodyFormat[],
): Promise<Result<Record<string, unknown>, BodyProblem>> {
  const mediaType = mediaTypeOf(request.headers.get('Content-Type'))
  const format = formats.find((candidate) => MEDIA_TYPES[candidate] === mediaType)
  if (format === undefined) {
    return invalid(`Content-Type must be ${formats.map((candidate) => MEDIA_TYPES[candidate]).join(' or ')}`)
  }
  const bytes = await readLimited(request, limit)
  if (bytes === null) return err({ problem: 'too_large', limit })
  if (bytes === 'incomplete') return invalid('Request body incomplete')
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch {
    return invalid('Request body is not valid UTF-8')
  }
  return format === 'json' ? parseJson(text) : parseForm(text)
}

/** True when the request carries a multipart form (an upload). */
export function isMultipart(request: Request): boolean {
  return mediaTypeOf(request.headers.get('Content-Type')) === 'multipart/form-data'
}

/**
 * The bytes of the file in field `field` of a multipart form of at most `limit` bytes (Node-RED's
 * editor sends a module tarball as `tarball`).
 */
export async function readUpload(
  request: Request,
  limit: number,
  field: string,
): Promise<Result<Uint8Array, BodyProblem>> {
  const bytes = await readLimited(request, limit)
  if (bytes === null) return err({ problem: 'too_large', limit })
  if (bytes === 'incomplete') return invalid('Request body incomplete')
  let form: FormData
  try {
    form = await new Response(bytes as Uint8Array<ArrayBuffer>, {
      headers: { 'Content-Type': request.headers.get('Content-Type') ?? '' },
    }).formData()
  } catch {
    return invalid('Malformed multipart body')
  }
  const file = form.get(field)
  if (file === null || typeof file === 'string') return invalid(`Missing required file: ${field}`)
  return ok(new Uint8Array(await file.arrayBuffer()))
}
