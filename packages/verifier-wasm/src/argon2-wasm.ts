// The argon2 reference implementation compiled to WebAssembly (the binary of @phi-ag/argon2),
// driven through its C API (argon2.h). Passwords go in as UTF-8 bytes with their byte length, as
// the native `argon2` package hashes them, so a hash made by either verifies in the other.

/** The exports of the module: argon2.h's functions and the C heap. */
interface Argon2Exports {
  memory: { buffer: ArrayBuffer }
  _initialize(): void
  malloc(size: number): number
  free(pointer: number): void
  argon2_verify(encoded: number, password: number, passwordLength: number, type: number): number
  argon2_hash(
    timeCost: number,
    memoryCost: number,
    parallelism: number,
    password: number,
    passwordLength: number,
    salt: number,
    saltLength: number,
    hash: number,
    hashLength: number,
    encoded: number,
    encodedLength: number,
    type: number,
    version: number,
  ): number
  argon2_encodedlen(
    timeCost: number,
    memoryCost: number,
    parallelism: number,
    saltLength: number,
    hashLength: number,
    type: number,
  ): number
}

/** The WebAssembly and Web Crypto globals used here, declared so no DOM typings are needed. */
interface WebGlobals {
  WebAssembly: {
    Module: abstract new (...args: never[]) => object
    instantiate(source: unknown, imports: object): Promise<unknown>
  }
  crypto: { getRandomValues(array: Uint8Array): Uint8Array }
  TextEncoder: new () => { encode(text: string): Uint8Array }
  TextDecoder: new () => { decode(bytes: Uint8Array): string }
}
const web = globalThis as unknown as WebGlobals

/** A compiled module (what workerd and bundlers hand over for a `.wasm` import), or its bytes. */
export type WasmSource = ArrayBuffer | Uint8Array | object

/** argon2.h's `argon2_type`, by the prefix of a PHC string. */
const TYPES: ReadonlyArray<[prefix: string, type: number]> = [
  ['$argon2id$', 2],
  ['$argon2i$', 1],
  ['$argon2d$', 0],
]
const ARGON2_OK = 0
const ARGON2_VERSION_13 = 0x13
const ARGON2ID = 2

/** The cost of an argon2id hash: memory in KiB, passes, lanes. */
export interface Argon2Cost {
  memoryCost: number
  timeCost: number
  parallelism: number
}

export interface Argon2Wasm {
  /** True when `password` matches the PHC string `encoded`; false for a malformed one. */
  verify(encoded: string, password: string): boolean
  /** A PHC string of `password` (argon2id, v=19, 16 random salt bytes, 32 hash bytes). */
  hash(password: string | Uint8Array, cost: Argon2Cost): string
}

/** `length` bytes from the platform CSPRNG. */
export const randomBytes = (length: number): Uint8Array => web.crypto.getRandomValues(new Uint8Array(length))

/**
 * The PHC string with its parameters in the order argon2.h's decoder requires (`m,t,p`): the
 * native package writes them in another order (`m,p,t`). Anything unexpected is left as it is, for
 * the decoder to refuse.
 */
export function canonicalPhc(encoded: string): string {
  const parts = encoded.split('$')
  const params = parts[3]
  if (parts.length !== 6 || params === undefined) return encoded
  const values = new Map(
    params.split(',').map((pair) => [pair.split('=')[0], pair.slice(pair.indexOf('=') + 1)]),
  )
  const [m, t, p] = [values.get('m'), values.get('t'), values.get('p')]
  if (values.size !== 3 || m === undefined || t === undefined || p === undefined) return encoded
  parts[3] = `m=${m},t=${t},p=${p}`
  return parts.join('$')
}

const encoder = new web.TextEncoder()
const decoder = new web.TextDecoder()

/** Instantiates the module; every call then runs on its heap, one at a time (they are synchronous). */
export async function instantiateArgon2(source: WasmSource): Promise<Argon2Wasm> {
  const result = (await web.WebAssembly.instantiate(source, {})) as
    | { exports: unknown }
    | { instance: { exports: unknown } }
  // A compiled module instantiates to an Instance, bytes to { module, instance }.
  const exports = ('instance' in result ? result.instance.exports : result.exports) as Argon2Exports
  exports._initialize()

  /** Copies bytes onto the heap, runs `work` with their address, then wipes and frees them. */
  const withBytes = <T>(bytes: Uint8Array, work: (pointer: number) => T): T => {
    const pointer = exports.malloc(Math.max(bytes.length, 1))
    if (pointer === 0) throw new Error('argon2: out of WebAssembly memory')
    new Uint8Array(exports.memory.buffer, pointer, bytes.length).set(bytes)
    try {
      return work(pointer)
    } finally {
      // The heap may have grown during `work`: take a fresh view of it.
      new Uint8Array(exports.memory.buffer, pointer, bytes.length).fill(0)
      exports.free(pointer)
    }
  }
  const cString = (text: string) => encoder.encode(`${text}\0`)

  return {
    verify(encoded, password) {
      const type = TYPES.find(([prefix]) => encoded.startsWith(prefix))?.[1]
      if (type === undefined || encoded.includes('\0')) return false
      const bytes = encoder.encode(password)
      const outcome = withBytes(cString(canonicalPhc(encoded)), (encodedAt) =>
        withBytes(bytes, (passwordAt) => exports.argon2_verify(encodedAt, passwordAt, bytes.length, type)),
      )
      bytes.fill(0)
      return outcome === ARGON2_OK
    },
    hash(password, { memoryCost, timeCost, parallelism }) {
      const bytes = typeof password === 'string' ? encoder.encode(password) : password
      const salt = randomBytes(16)
      const hashLength = 32
      const length = exports.argon2_encodedlen(
        timeCost,
        memoryCost,
        parallelism,
        salt.length,
        hashLength,
        ARGON2ID,
      )
      const out = new Uint8Array(length + hashLength)
      return withBytes(out, (outAt) => {
        const encodedAt = outAt + hashLength
        const outcome = withBytes(bytes, (passwordAt) =>
          withBytes(salt, (saltAt) =>
            exports.argon2_hash(
              timeCost,
              memoryCost,
              parallelism,
              passwordAt,
              bytes.length,
              saltAt,
              salt.length,
              outAt,
              hashLength,
              encodedAt,
              length,
              ARGON2ID,
              ARGON2_VERSION_13,
            ),
          ),
        )
        if (outcome !== ARGON2_OK)
          throw new RangeError(`argon2: cannot hash with these parameters (${outcome})`)
        const written = new Uint8Array(exports.memory.buffer, encodedAt, length)
        const end = written.indexOf(0)
        return decoder.decode(written.slice(0, end === -1 ? length : end))
      })
    },
  }
}
