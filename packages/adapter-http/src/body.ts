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

// Not hono/body-limit: it trusts a Content-Length when there is one (here the bytes read count),
// reads every body through the web stream (not Node's request, below), turns a body cut short
// into a thrown error (here 400 'Request body incomplete'), and runs before the handler, so
// before the permission check that must come first.

/**
 * Reads at most `limit` bytes (null past them). The limit is enforced on the bytes actually read,
 * whatever Content-Length claims (readBody refuses a declared length over it without reading).
 * 'incomplete': the body stream failed, i.e. the client went away before sending all of it.
 */
async function readLimited(request: Request, limit: number): Promise<Uint8Array | null | 'incomplete'> {
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
  return concat(chunks, size)
}

/**
 * The part of Node's `IncomingMessage` a body is read from directly. @hono/node-server hands the
 * app the request it came as (`c.env.incoming`); reading it there skips building a web Request
 * and ReadableStream around every body.
 */
interface NodeIncoming {
  readonly complete: boolean
  readonly readableEnded: boolean
  readonly readableFlowing: boolean | null
  readonly readableEncoding: string | null
  readonly destroyed: boolean
  read(): Uint8Array | null
  on(event: string, listener: (...args: never[]) => void): unknown
  off(event: string, listener: (...args: never[]) => void): unknown
}

/** The Node request behind a Hono context's `env`, when the app runs on @hono/node-server. */
function nodeIncomingOf(env: unknown): NodeIncoming | null {
  const incoming = (env as { incoming?: Partial<NodeIncoming> } | null | undefined)?.incoming
  if (typeof incoming?.on !== 'function' || typeof incoming.off !== 'function') return null
  if (typeof incoming.read !== 'function') return null
  if (typeof incoming.complete !== 'boolean' || typeof incoming.readableEnded !== 'boolean') return null
  // Already read (or torn down) by someone else: the web stream says what is left.
  return incoming.readableEnded || incoming.destroyed ? null : (incoming as NodeIncoming)
}

const concat = (chunks: Uint8Array[], size: number) => {
  const bytes = new Uint8Array(size)
  let offset = 0
  for (const chunk of chunks) {
    bytes.set(chunk, offset)
    offset += chunk.byteLength
  }
  return bytes
}

/**
 * The whole body when Node's parser has already seen all of it: a small request's body mostly comes
 * in the same packet as its headers, and a microtask after the request event the stream holds it,
 * ended. One read takes it without the events and ticks of a flowing stream. Undefined when it
 * has not all arrived, or something else reads the stream.
 */
function readArrived(incoming: NodeIncoming, limit: number): Uint8Array | null | undefined {
  if (!incoming.complete || incoming.readableFlowing === true || incoming.destroyed) return undefined
  // Decoded to text by someone (setEncoding): the bytes are no longer there to take.
  if (incoming.readableEncoding !== null) return undefined
  // Paused and ended: read() hands over everything buffered, as one chunk (null when empty).
  const bytes = incoming.read()
  if (bytes === null) return new Uint8Array(0)
  return bytes.byteLength > limit ? null : bytes
}

/** Node's setImmediate: only Node's request is read here, but this package names no Node types. */
const { setImmediate } = globalThis as unknown as { setImmediate: (callback: () => void) => unknown }

/** Resolves in the event loop's next check phase. */
const nextCheck = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** readLimited, from Node's request: the same limit and outcomes, without the web stream. */
async function readIncoming(
  incoming: NodeIncoming,
  limit: number,
): Promise<Uint8Array | null | 'incomplete'> {
  // The request event comes before Node's parser reads on in the packet, and the microtasks run
  // between its steps: the rest of the packet is parsed by the loop's next check phase.
  if (!incoming.complete) await nextCheck()
  const arrived = readArrived(incoming, limit)
  if (arrived !== undefined) return arrived
  return new Promise((resolve) => {
    const chunks: Uint8Array[] = []
    let size = 0
    const finish = (result: Uint8Array | null | 'incomplete') => {
      incoming.off('data', onData)
      incoming.off('end', onEnd)
      incoming.off('error', onFailure)
      incoming.off('close', onClose)
      resolve(result)
    }
    // Past the limit, the rest still flows in (and is dropped), so the answer can be sent.
    const onData = (chunk: Uint8Array) => {
      size += chunk.byteLength
      if (size > limit) finish(null)
      else chunks.push(chunk)
    }
    const onEnd = () => finish(concat(chunks, size))
    const onFailure = () => finish('incomplete')
    // Closed before its end: the client went away mid-body.
    const onClose = () => finish(incoming.complete ? concat(chunks, size) : 'incomplete')
    incoming.on('data', onData)
    incoming.on('end', onEnd)
    incoming.on('error', onFailure)
    incoming.on('close', onClose)
  })
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
 * an object (form fields are strings); shapes are validated by the caller. `env` is the Hono
 * context's: on @hono/node-server the body is read from Node's request itself.
 */
export async function readBody(
  request: Request,
  limit: number,
  formats: readonly BodyFormat[],
  env?: unknown,
): Promise<Result<Record<string, unknown>, BodyProblem>> {
  const mediaType = mediaTypeOf(request.headers.get('Content-Type'))
  const format = formats.find((candidate) => MEDIA_TYPES[candidate] === mediaType)
  if (format === undefined) {
    return invalid(`Content-Type must be ${formats.map((candidate) => MEDIA_TYPES[candidate]).join(' or ')}`)
  }
  const declared = Number(request.headers.get('Content-Length') ?? 0)
  const incoming = nodeIncomingOf(env)
  const bytes =
    Number.isFinite(declared) && declared > limit
      ? null
      : incoming === null
        ? await readLimited(request, limit)
        : await readIncoming(incoming, limit)
  if (bytes === null) return err({ problem: 'too_large', limit })
  if (bytes === 'incomplete') return invalid('Request body incomplete')
  let text: string
  try {
    text = UTF8.decode(bytes)
  } catch {
    return invalid('Request body is not valid UTF-8')
  }
  return format === 'json' ? parseJson(text) : parseForm(text)
}

/**
 * One strict decoder for every body: a decode without `stream` starts afresh each time, so it can be
 * shared, and making one per request is a measurable part of a small request's cost.
 */
export const UTF8 = new TextDecoder('utf-8', { fatal: true })

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
