// An HTTP/1.1 client over a bare socket: it sends exactly the bytes it is given (duplicate,
// malformed or oversized headers, wrong framing, odd methods and targets), which fetch would
// normalise or refuse, and reads back the first final response.
import * as net from 'node:net'

export interface RawResponse {
  status: number
  /** Header lines in order, names lower-cased. */
  headers: Array<[string, string]>
  /** The body, de-chunked; empty for HEAD and bodiless statuses. */
  body: Buffer
  /** Interim (1xx) statuses received before this one. */
  interim: number[]
}

export type RawOutcome =
  | { kind: 'response'; response: RawResponse }
  /** The server closed (or reset) the connection before a whole response arrived. */
  | { kind: 'closed'; received: Buffer }
  | { kind: 'timeout'; received: Buffer }

export interface RawRequestOptions {
  port: number
  host?: string
  /** The client's own address (any of 127.0.0.0/8 on loopback). */
  localAddress?: string
  /** The method sent, to know that a HEAD response has no body. */
  method: string
  bytes: Buffer
  /** Half-closes the connection once the bytes are written (the server then sees the end). */
  endAfterWrite?: boolean
  timeoutMs?: number
}

/** The first header named `name` (lower case), or undefined. */
export function headerOf(response: RawResponse, name: string): string | undefined {
  return response.headers.find(([key]) => key === name)?.[1]
}

/** Sends `bytes` on a new connection and resolves with the first final response. */
export function sendRaw(options: RawRequestOptions): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const socket = net.connect({
      port: options.port,
      host: options.host ?? '127.0.0.1',
      localAddress: options.localAddress,
      allowHalfOpen: true,
    })
    let received = Buffer.alloc(0)
    let settled = false
    const finish = (outcome: RawOutcome) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      socket.destroy()
      resolve(outcome)
    }
    const timer = setTimeout(() => finish({ kind: 'timeout', received }), options.timeoutMs ?? 10_000)
    const tryParse = (ended: boolean) => {
      const response = parseResponse(received, options.method === 'HEAD', ended)
      if (response !== null) finish({ kind: 'response', response })
      else if (ended) finish({ kind: 'closed', received })
    }
    socket.on('data', (chunk: Buffer) => {
      received = Buffer.concat([received, chunk])
      tryParse(false)
    })
    socket.on('end', () => tryParse(true))
    socket.on('close', () => tryParse(true))
    // A reset after the server answered and closed still leaves what was received to parse.
    socket.on('error', () => tryParse(true))
    socket.write(options.bytes, () => {
      if (options.endAfterWrite) socket.end()
    })
  })
}

const HEADER_END = Buffer.from('\r\n\r\n')

/**
 * Parses the first final response in `data`; null while it is incomplete. `ended`: no more bytes
 * will come, so a body without a length ends here.
 */
export function parseResponse(data: Buffer, head: boolean, ended: boolean): RawResponse | null {
  const interim: number[] = []
  let offset = 0
  for (;;) {
    const end = data.indexOf(HEADER_END, offset)
    if (end === -1) return null
    const lines = data.subarray(offset, end).toString('latin1').split('\r\n')
    const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(lines[0] ?? '')?.[1] ?? Number.NaN)
    if (Number.isNaN(status)) throw new Error(`not an HTTP response: ${JSON.stringify(lines[0])}`)
    const headers = lines.slice(1).map((line): [string, string] => {
      const colon = line.indexOf(':')
      return [line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim()]
    })
    const bodyStart = end + HEADER_END.length
    if (status >= 100 && status < 200) {
      interim.push(status)
      offset = bodyStart
      continue
    }
    const response = (body: Buffer): RawResponse => ({ status, headers, body, interim })
    if (head || status === 204 || status === 304) return response(Buffer.alloc(0))
    const rest = data.subarray(bodyStart)
    const chunked = headers.some(([key, value]) => key === 'transfer-encoding' && /chunked/i.test(value))
    if (chunked) {
      const body = dechunk(rest)
      return body === null ? null : response(body)
    }
    const length = headers.find(([key]) => key === 'content-length')?.[1]
    if (length !== undefined) {
      const size = Number(length)
      return rest.length >= size ? response(rest.subarray(0, size)) : null
    }
    return ended ? response(rest) : null
  }
}

/** The body of a chunked transfer coding, or null while it is incomplete. */
function dechunk(data: Buffer): Buffer | null {
  const parts: Buffer[] = []
  let offset = 0
  for (;;) {
    const lineEnd = data.indexOf('\r\n', offset)
    if (lineEnd === -1) return null
    const size = Number.parseInt(data.subarray(offset, lineEnd).toString('latin1'), 16)
    if (Number.isNaN(size)) throw new Error('malformed chunk size')
    const start = lineEnd + 2
    if (size === 0) return data.length >= start + 2 ? Buffer.concat(parts) : null
    if (data.length < start + size + 2) return null
    parts.push(data.subarray(start, start + size))
    offset = start + size + 2
  }
}
