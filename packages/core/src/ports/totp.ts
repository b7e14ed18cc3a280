// TOTP (RFC 6238): secrets and codes. The server implements it (otpauth), sealing each secret with
// its key so that the store holds no usable secret; a fake in tests.

/** A new TOTP secret, for the store and for the person enrolling. */
export interface NewTotpSecret {
  /** The secret sealed (encrypted) for the store; opaque to the core. */
  sealed: string
  /** The secret itself (base32), shown to the person once to type into an app. */
  secret: string
  /** Its `otpauth://totp/…` URI, for an authenticator app. */
  uri: string
  /** The URI as a QR code: an SVG document, made here (no third-party service). */
  qrSvg: string
}

export interface TotpVerifier {
  /** A new random secret for `username`, sealed for that person only. */
  create(username: string): Promise<NewTotpSecret>
  /**
   * The time step (`floor(seconds since the epoch / period)`) whose code `code` is, among the step
   * of `now` and the one before and after it (a window of one step), or null: a code of another
   * step, not a code at all, or a sealed secret that does not open with this key for this person.
   * Never throws for what a person typed.
   */
  check(username: string, sealed: string, code: string, now: number): Promise<number | null>
}
