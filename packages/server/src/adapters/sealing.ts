// Text sealed with AES-256-GCM: `v1.<iv>.<ciphertext and tag>`, base64url, bound to data of the
// caller's (what the sealed text belongs to), so that it opens only there.
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

const SEALED_VERSION = 'v1'

/** An AES-256 key derived (HKDF-SHA-256) from configured key text, for one `purpose`. */
export const derivedKey = (key: string, purpose: string): Buffer =>
  Buffer.from(hkdfSync('sha256', key, 'flowadmin', purpose, 32))

/** `text` sealed under `key`, bound to `boundTo`. */
export function sealText(key: Buffer, boundTo: Buffer, text: string): string {
  const iv = randomBytes(12)
  const cipher = createCipheriv('aes-256-gcm', key, iv)
  cipher.setAAD(boundTo)
  const sealed = Buffer.concat([cipher.update(text, 'utf8'), cipher.final(), cipher.getAuthTag()])
  return `${SEALED_VERSION}.${iv.toString('base64url')}.${sealed.toString('base64url')}`
}

/** The text sealed under `key` for `boundTo`, or null when it does not open (another key, binding, or damage). */
export function openText(key: Buffer, boundTo: Buffer, sealed: string): string | null {
  const [version, iv, body] = sealed.split('.')
  if (version !== SEALED_VERSION || iv === undefined || body === undefined) return null
  try {
    const data = Buffer.from(body, 'base64url')
    if (data.length < 16) return null
    const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'))
    decipher.setAAD(boundTo)
    decipher.setAuthTag(data.subarray(data.length - 16))
    return Buffer.concat([decipher.update(data.subarray(0, data.length - 16)), decipher.final()]).toString(
      'utf8',
    )
  } catch {
    return null
  }
}
