// The only file that touches the real clock and random source. Web-standard globals only, so
// the core runs unchanged in Node, Deno, Bun, workers and browsers.
import type { Clock, Digest, RandomSource } from './ports/index.js'

/** The few Web platform globals the core uses, declared here so the core needs no DOM typings. */
interface WebGlobals {
  crypto: {
    getRandomValues(array: Uint8Array): Uint8Array
    subtle: {
      digest(algorithm: 'SHA-256', data: Uint8Array): Promise<ArrayBuffer>
      importKey(
        format: 'raw',
        key: Uint8Array,
        algorithm: { name: 'HMAC'; hash: 'SHA-256' },
        extractable: false,
        usages: ['sign'],
      ): Promise<unknown>
      sign(algorithm: 'HMAC', key: unknown, data: Uint8Array): Promise<ArrayBuffer>
    }
  }
  TextEncoder: new () => { encode(text: string): Uint8Array }
}
const web = globalThis as unknown as WebGlobals

export const systemClock: Clock = { now: () => Date.now() }

export const systemRandom: RandomSource = {
  bytes(length) {
    const bytes = new Uint8Array(length)
    // getRandomValues fills at most 65536 bytes a call; tokens need far fewer.
    web.crypto.getRandomValues(bytes)
    return bytes
  },
}

const encoder = new web.TextEncoder()

export const webDigest: Digest = {
  async sha256(text) {
    const digest = await web.crypto.subtle.digest('SHA-256', encoder.encode(text))
    return toHex(new Uint8Array(digest))
  },
  async hmacSha256(key, text) {
    const subtle = web.crypto.subtle
    const secret = await subtle.importKey(
      'raw',
      encoder.encode(key),
      { name: 'HMAC', hash: 'SHA-256' },
      false,
      ['sign'],
    )
    return toHex(new Uint8Array(await subtle.sign('HMAC', secret, encoder.encode(text))))
  },
}

function toHex(bytes: Uint8Array): string {
  let hex = ''
  for (const byte of bytes) hex += byte.toString(16).padStart(2, '0')
  return hex
}
