const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

/** Base64url without padding (RFC 4648 §5): safe in URLs, forms and headers as it is. */
export function base64url(bytes: Uint8Array): string {
  let out = ''
  let i = 0
  for (; i + 2 < bytes.length; i += 3) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8) | (bytes[i + 2] as number)
    out +=
      ALPHABET.charAt(n >> 18) +
      ALPHABET.charAt((n >> 12) & 63) +
      ALPHABET.charAt((n >> 6) & 63) +
      ALPHABET.charAt(n & 63)
  }
  const rest = bytes.length - i
  if (rest === 1) {
    const n = (bytes[i] as number) << 16
    out += ALPHABET.charAt(n >> 18) + ALPHABET.charAt((n >> 12) & 63)
  } else if (rest === 2) {
    const n = ((bytes[i] as number) << 16) | ((bytes[i + 1] as number) << 8)
    out += ALPHABET.charAt(n >> 18) + ALPHABET.charAt((n >> 12) & 63) + ALPHABET.charAt((n >> 6) & 63)
  }
  return out
}

/** The bytes of base64url text (padding allowed), or null when it is not base64url. */
export function fromBase64url(text: string): Uint8Array | null {
  const body = text.replace(/=+$/, '')
  if (!/^[A-Za-z0-9_-]*$/.test(body) || body.length % 4 === 1) return null
  const bytes = new Uint8Array(Math.floor((body.length * 3) / 4))
  let bits = 0
  let value = 0
  let at = 0
  for (const char of body) {
    value = (value << 6) | ALPHABET.indexOf(char)
    bits += 6
    if (bits >= 8) {
      bits -= 8
      bytes[at++] = (value >> bits) & 255
    }
  }
  return bytes
}
