// A software authenticator for tests of the real relying party: it makes ES256 (P-256) passkeys
// with "none" attestation and signs sign-in challenges, as a browser's answer carries them
// (RegistrationResponseJSON, AuthenticationResponseJSON). Its flags and counter are the test's.
import { createHash, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto'

type Cbor = number | string | Uint8Array | Cbor[] | Map<Cbor, Cbor>

/** CBOR (RFC 8949) of the few kinds WebAuthn needs: integers, byte and text strings, arrays, maps. */
function cbor(value: Cbor): Buffer {
  const head = (major: number, length: number) => {
    if (length < 24) return Buffer.from([(major << 5) | length])
    if (length < 256) return Buffer.from([(major << 5) | 24, length])
    const out = Buffer.alloc(3)
    out[0] = (major << 5) | 25
    out.writeUInt16BE(length, 1)
    return out
  }
  if (typeof value === 'number') return value >= 0 ? head(0, value) : head(1, -1 - value)
  if (typeof value === 'string') {
    const bytes = Buffer.from(value, 'utf8')
    return Buffer.concat([head(3, bytes.length), bytes])
  }
  if (value instanceof Uint8Array) return Buffer.concat([head(2, value.length), value])
  if (Array.isArray(value)) return Buffer.concat([head(4, value.length), ...value.map(cbor)])
  return Buffer.concat([head(5, value.size), ...[...value].flatMap(([k, v]) => [cbor(k), cbor(v)])])
}

const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url')
const sha256 = (data: Uint8Array | string) => createHash('sha256').update(data).digest()

export const UP = 0x01
export const UV = 0x04
const AT = 0x40

interface Held {
  id: Buffer
  key: KeyObject
  counter: number
}

export interface CeremonyOptions {
  /** The origin the browser says it is at. */
  origin: string
  /** The relying party id whose hash the authenticator data carries; default the options'. */
  rpId?: string
  /** The flags byte (user present, verified); default UP | UV. */
  flags?: number
}

/** A software authenticator; `counting: false` makes one that reports 0 every time, as synced passkeys do. */
export function createSoftwareAuthenticator({ counting = true } = {}) {
  const held = new Map<string, Held>()
  return {
    /** The answer to registration options (PublicKeyCredentialCreationOptionsJSON). */
    create(options: { challenge: string; rp: { id?: string } }, ceremony: CeremonyOptions) {
      const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
      const jwk = publicKey.export({ format: 'jwk' })
      const id = randomBytes(16)
      const credential: Held = { id, key: privateKey, counter: 0 }
      held.set(b64url(id), credential)
      const cose = new Map<Cbor, Cbor>([
        [1, 2],
        [3, -7],
        [-1, 1],
        [-2, Buffer.from(jwk.x as string, 'base64url')],
        [-3, Buffer.from(jwk.y as string, 'base64url')],
      ])
      const length = Buffer.alloc(2)
      length.writeUInt16BE(id.length)
      const authData = Buffer.concat([
        sha256(ceremony.rpId ?? options.rp.id ?? ''),
        Buffer.from([(ceremony.flags ?? UP | UV) | AT]),
        Buffer.alloc(4),
        Buffer.alloc(16),
        length,
        id,
        cbor(cose),
      ])
      const clientData = JSON.stringify({
        type: 'webauthn.create',
        challenge: options.challenge,
        origin: ceremony.origin,
        crossOrigin: false,
      })
      const attestation = cbor(
        new Map<Cbor, Cbor>([
          ['fmt', 'none'],
          ['attStmt', new Map()],
          ['authData', authData],
        ]),
      )
      return {
        id: b64url(id),
        rawId: b64url(id),
        type: 'public-key',
        response: {
          clientDataJSON: b64url(Buffer.from(clientData)),
          attestationObject: b64url(attestation),
          transports: ['internal'],
        },
        clientExtensionResults: {},
        authenticatorAttachment: 'platform',
      }
    },

    /** The answer to sign-in options (PublicKeyCredentialRequestOptionsJSON) with passkey `id`. */
    get(
      id: string,
      options: { challenge: string; rpId?: string },
      ceremony: CeremonyOptions & { counter?: number },
    ) {
      const credential = held.get(id)
      if (credential === undefined) throw new Error(`no passkey ${id}`)
      if (counting) credential.counter++
      const counter = Buffer.alloc(4)
      counter.writeUInt32BE(ceremony.counter ?? (counting ? credential.counter : 0))
      const authData = Buffer.concat([
        sha256(ceremony.rpId ?? options.rpId ?? ''),
        Buffer.from([ceremony.flags ?? UP | UV]),
        counter,
      ])
      const clientData = Buffer.from(
        JSON.stringify({
          type: 'webauthn.get',
          challenge: options.challenge,
          origin: ceremony.origin,
          crossOrigin: false,
        }),
      )
      const signature = sign('sha256', Buffer.concat([authData, sha256(clientData)]), credential.key)
      return {
        id,
        rawId: id,
        type: 'public-key',
        response: {
          clientDataJSON: b64url(clientData),
          authenticatorData: b64url(authData),
          signature: b64url(signature),
        },
        clientExtensionResults: {},
        authenticatorAttachment: 'platform',
      }
    },
  }
}
