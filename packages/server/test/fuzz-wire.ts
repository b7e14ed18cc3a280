// A generated request put on the wire: its bytes exactly, and what the server will see of it.
import type { SeenRequest } from './fuzz-oracle.js'

/** How many tokens the fuzzer may revoke (issued before it starts). */
export const VICTIMS = 12

/** A token by role, resolved when the request is sent (the generator never sees real tokens). */
export type TokenRef = 'admin' | 'viewer' | 'dead' | { victim: number }
/** A piece of a header value or body: text (sent as UTF-8), raw bytes, or a token. */
export type Part = string | Uint8Array | { token: TokenRef }

/** Ways to make the request invalid HTTP/1.1, which the server refuses before the app. */
export const BREAKAGES = [
  'lowercase-method',
  'space-in-target',
  'backslash-in-target',
  'nul-in-header',
  'space-in-header-name',
  'missing-host',
  'invalid-host',
  'length-and-chunked',
  'negative-length',
  'bad-version',
] as const
export type Breakage = (typeof BREAKAGES)[number]

/**
 * How the body is framed: a right Content-Length, chunks, a Content-Length too short or none at
 * all (the server reads a cut body or none, and what follows as a second, pipelined request), or
 * one too long (the body never completes).
 */
export type Framing = 'length' | 'chunked' | 'short' | 'long' | 'none'

export interface FuzzRequest {
  /** What the generator aimed at, for messages. */
  aim: string
  method: string
  target: string
  headers: Array<[string, Part[]]>
  body: Part[]
  framing: Framing
  breakage: Breakage | null
  /** The client's address is 127.0.0.<from>. */
  from: number
}

export interface Tokens {
  admin: string
  viewer: string
  dead: string
  victims: string[]
}

export interface Wire {
  bytes: Buffer
  /** Half-close after writing: the server then sees the end of a body that never completes. */
  endAfterWrite: boolean
  localAddress: string
  seen: SeenRequest
}

/** Node's default limit on the request line plus headers; more is 431. */
const MAX_HEADER_BYTES = 16_384

function tokenOf(ref: TokenRef, tokens: Tokens): string {
  if (typeof ref === 'object') return tokens.victims[ref.victim] as string
  return tokens[ref]
}

export function render(parts: Part[], tokens: Tokens): Buffer {
  return Buffer.concat(
    parts.map((part) =>
      typeof part === 'string'
        ? Buffer.from(part, 'utf8')
        : part instanceof Uint8Array
          ? part
          : Buffer.from(tokenOf(part.token, tokens), 'latin1'),
    ),
  )
}

function chunked(body: Buffer): Buffer {
  const cut = Math.floor(body.length / 2)
  const pieces = [body.subarray(0, cut), body.subarray(cut)].filter((piece) => piece.length > 0)
  return Buffer.concat([
    ...pieces.flatMap((piece) => [
      Buffer.from(`${piece.length.toString(16)}\r\n`),
      piece,
      Buffer.from('\r\n'),
    ]),
    Buffer.from('0\r\n\r\n'),
  ])
}

/**
 * What follows a body cut short: a well-formed request, so that the first response is the
 * app's (garbage there would make the parser answer 400 first, racing the app).
 */
const SMUGGLED = Buffer.from('GET /auth/login HTTP/1.1\r\nHost: smuggled\r\n\r\n', 'latin1')

/** Controls other than tab, which a header value must not hold. */
const hasControl = (value: string) =>
  [...value].some((char) => {
    const code = char.charCodeAt(0)
    return (code < 0x20 && code !== 0x09) || code === 0x7f
  })

const trimOws = (value: string) => value.replace(/^[ \t]+|[ \t]+$/g, '')

/** The bytes of `request` and what the server sees of them. */
export function toWire(request: FuzzRequest, tokens: Tokens, port: number): Wire {
  const broken = request.breakage
  const method = broken === 'lowercase-method' ? request.method.toLowerCase() : request.method
  // Non-ASCII goes out as UTF-8 bytes; the server reads the request line as Latin-1.
  let target = Buffer.from(request.target, 'utf8').toString('latin1')
  if (broken === 'space-in-target') target = `${target.slice(0, 1)} ${target.slice(1)}`
  if (broken === 'backslash-in-target') target = `/\\${target.slice(1)}`

  const headers: Array<[string, string]> = []
  if (broken === 'invalid-host') headers.push(['Host', 'a b/c'])
  else if (broken !== 'missing-host') headers.push(['Host', `127.0.0.1:${port}`])
  for (const [name, parts] of request.headers) headers.push([name, render(parts, tokens).toString('latin1')])
  if (broken === 'nul-in-header') headers.push(['X-Fuzz', 'a\u0000b'])
  if (broken === 'space-in-header-name') headers.push(['X Fuzz', '1'])

  const body = render(request.body, tokens)
  let payload = body
  let seenBody = body
  let endAfterWrite = false
  const framing = broken === 'length-and-chunked' || broken === 'negative-length' ? 'broken' : request.framing
  if (broken === 'length-and-chunked') {
    headers.push(['Content-Length', String(body.length)], ['Transfer-Encoding', 'chunked'])
    payload = chunked(body)
  } else if (broken === 'negative-length') {
    headers.push(['Content-Length', '-1'])
  } else if (framing === 'chunked') {
    headers.push(['Transfer-Encoding', 'chunked'])
    payload = chunked(body)
  } else if (framing === 'short') {
    seenBody = body.subarray(0, Math.floor(body.length / 2))
    headers.push(['Content-Length', String(seenBody.length)])
    payload = Buffer.concat([seenBody, SMUGGLED])
  } else if (framing === 'long') {
    headers.push(['Content-Length', String(body.length + 1 + (body.length % 7))])
    endAfterWrite = true
  } else if (framing === 'none') {
    seenBody = Buffer.alloc(0)
    payload = SMUGGLED
  } else if (body.length > 0 || method === 'PUT' || method === 'POST') {
    headers.push(['Content-Length', String(body.length)])
  }
  // After `Connection: close` the parser refuses any further byte, so pipelining needs keep-alive.
  headers.push(['Connection', framing === 'short' || framing === 'none' ? 'keep-alive' : 'close'])

  const version = broken === 'bad-version' ? 'HTTP/9.9' : 'HTTP/1.1'
  const head = Buffer.from(
    `${method} ${target} ${version}\r\n${headers.map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`,
    'latin1',
  )
  const invalid =
    broken !== null ||
    framing === 'long' ||
    head.length > MAX_HEADER_BYTES ||
    /[^\x21-\x7e]/.test(target) ||
    headers.some(([, value]) => hasControl(value)) ||
    target.includes('\\')
  return {
    bytes: Buffer.concat([head, payload]),
    endAfterWrite,
    localAddress: `127.0.0.${request.from}`,
    seen: {
      method,
      target,
      headers: headers.map(([name, value]) => [name, trimOws(value)]),
      body: seenBody,
      broken: invalid,
    },
  }
}
