import { Secret, TOTP } from 'otpauth'

/**
 * The code an authenticator app shows for a base32 secret at `timestamp` (ms; now by default),
 * with flowadmin's parameters: 6 digits, 30 s, SHA-1. Also for the console's browser tests.
 */
export const totpCode = (secret: string, timestamp: number = Date.now()): string =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({
    timestamp,
  })
