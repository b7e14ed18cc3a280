import * as argon2 from 'argon2'
import { beforeAll, describe, expect, it } from 'vitest'
import { ARGON2ID_COST, createWasmVerifier, type WasmVerifier } from '../src/index.js'
import { loadArgon2Wasm } from '../src/load.js'

// The native package, as `flowadmin hash-pw` calls it.
const nativeHash = (password: string, type: 0 | 1 | 2 = argon2.argon2id) =>
  argon2.hash(password, { type, ...ARGON2ID_COST })

let verifier: WasmVerifier
beforeAll(async () => {
  verifier = await createWasmVerifier(await loadArgon2Wasm())
})

describe('the WebAssembly verifier', () => {
  it.each([
    ['plain', 'correct horse battery staple'],
    ['non-ASCII', 'pässwörd ✓ 🙂'],
    ['short', 'ab'],
    ['empty', ''],
    ['with a NUL', 'a\0b'],
  ])(
    'verifies a native argon2id hash of a %s password, and refuses any other password',
    async (_, password) => {
      const hash = await nativeHash(password)
      expect(await verifier.verify(hash, password)).toBe(true)
      expect(await verifier.verify(hash, `${password}x`)).toBe(false)
      expect(await verifier.verify(hash, password.slice(0, -1))).toBe(password === '')
    },
  )

  it('verifies argon2i and argon2d hashes as the native package does', async () => {
    expect(await verifier.verify(await nativeHash('s3cret', argon2.argon2i), 's3cret')).toBe(true)
    expect(await verifier.verify(await nativeHash('s3cret', argon2.argon2d), 's3cret')).toBe(true)
  })

  it('makes hashes the native package verifies, at the cost hash-pw uses', async () => {
    const hash = verifier.hash('pässwörd ✓')
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]{22}\$[A-Za-z0-9+/]{43}$/)
    expect(await argon2.verify(hash, 'pässwörd ✓')).toBe(true)
    expect(await argon2.verify(hash, 'passwörd ✓')).toBe(false)
    expect(verifier.hash('same')).not.toBe(verifier.hash('same'))
  })

  it('has a dummy hash at the same cost that no likely password matches', async () => {
    expect(verifier.dummyHash).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/)
    for (const password of ['', 'password', 'admin']) {
      expect(await verifier.verify(verifier.dummyHash, password)).toBe(false)
    }
    const other = await createWasmVerifier(await loadArgon2Wasm())
    expect(other.dummyHash).not.toBe(verifier.dummyHash)
  })

  it('answers false, without throwing, for malformed hashes', async () => {
    const good = await nativeHash('s3cret')
    const malformed = [
      '',
      'garbage',
      '$2b$10$abcdefghijklmnopqrstuv',
      good.slice(0, -10),
      good.replace('$argon2id$', '$argon2x$'),
      good.replace('m=19456', 'm=abc'),
      good.replace('m=19456', 'm=4294967295'),
      good.replace('t=2', 't=0'),
      `${good}$extra`,
      `${good}\0`,
    ]
    for (const hash of malformed) expect(await verifier.verify(hash, 's3cret')).toBe(false)
    // Still sound afterwards.
    expect(await verifier.verify(good, 's3cret')).toBe(true)
  })

  it('accepts a compiled module as well as bytes (what workerd and bundlers hand over)', async () => {
    const compiled = await WebAssembly.compile(await loadArgon2Wasm())
    const fromModule = await createWasmVerifier(compiled)
    expect(await fromModule.verify(await nativeHash('s3cret'), 's3cret')).toBe(true)
  })
})
