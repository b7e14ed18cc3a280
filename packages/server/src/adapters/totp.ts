// TOTP (RFC 6238) with otpauth: SHA-1, six digits, 30-second steps (what every authenticator app
// reads from a QR code), a window of one step. Each secret is sealed with AES-256-GCM under a key
// derived from the configured one and bound to its person, so the store holds no usable secret.
import type { NewTotpSecret, TotpVerifier } from '@flowadmin/core'
import { Secret, TOTP } from 'otpauth'
// Its types say `export =`, its ES module exports the same function as default (what Node loads).
// @ts-expect-error TS1259: a default import of an `export =` declaration, without esModuleInterop.
import qrcode from 'qrcode-generator'
import { MIN_MFA_KEY_LENGTH } from '../config/settings/mfa.js'
import { derivedKey, openText, sealText } from './sealing.js'

/** Seconds of one time step. */
export const TOTP_PERIOD = 30
const DIGITS = 6
/** Bytes of a new secret: 160 bits, as RFC 4226 recommends for SHA-1. */
const SECRET_BYTES = 20

/** The AES-256 key of sealed secrets, derived from the configured key text. */
const sealingKey = (key: string): Buffer => derivedKey(key, 'totp secrets v1')

/** The data each sealed secret is bound to: a secret moved to another person's row does not open. */
const boundTo = (username: string) => Buffer.from(`flowadmin totp\n${username}`, 'utf8')

/** Seals `secret` (base32) for `username`: `v1.<iv>.<ciphertext and tag>`, base64url. */
export const sealSecret = (key: Buffer, username: string, secret: string): string =>
  sealText(key, boundTo(username), secret)

/** The secret sealed for `username`, or null when it does not open (another key, person or a damaged value). */
export const openSecret = (key: Buffer, username: string, sealed: string): string | null =>
  openText(key, boundTo(username), sealed)

/** The URI as a QR code, an SVG document drawn here. */
function qrSvgOf(uri: string): string {
  const qr = qrcode(0, 'M')
  qr.addData(uri)
  qr.make()
  return qr.createSvgTag({ cellSize: 4, margin: 4, scalable: true })
}

export interface TotpOptions {
  /** The configured key text (`adminAuth.mfa.key` or FLOWADMIN_MFA_KEY). */
  key: string
  /** The issuer shown in authenticator apps. */
  issuer: string
}

/** The TOTP port over otpauth and AES-256-GCM. */
export function createTotpVerifier(options: TotpOptions): TotpVerifier {
  if (options.key.length < MIN_MFA_KEY_LENGTH) {
    throw new RangeError(`the second-factor key must have at least ${MIN_MFA_KEY_LENGTH} characters`)
  }
  const key = sealingKey(options.key)
  const totpOf = (username: string, secret: Secret) =>
    new TOTP({
      issuer: options.issuer,
      label: username,
      algorithm: 'SHA1',
      digits: DIGITS,
      period: TOTP_PERIOD,
      secret,
    })
  return {
    async create(username): Promise<NewTotpSecret> {
      const secret = new Secret({ size: SECRET_BYTES })
      const uri = totpOf(username, secret).toString()
      return {
        sealed: sealSecret(key, username, secret.base32),
        secret: secret.base32,
        uri,
        qrSvg: qrSvgOf(uri),
      }
    },
    async check(username, sealed, code, now) {
      const token = code.replace(/\s/g, '')
      if (!/^\d{6}$/.test(token)) return null
      const secret = openSecret(key, username, sealed)
      if (secret === null) return null
      const delta = totpOf(username, Secret.fromBase32(secret)).validate({ token, timestamp: now, window: 1 })
      return delta === null ? null : TOTP.counter({ period: TOTP_PERIOD, timestamp: now }) + delta
    },
  }
}
