import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import { costOf } from '../src/adapters/argon2.js'
import { ARGON2_OPTIONS, createArgon2Verifier, hashPassword } from '../src/index.js'

/** bcryptjs as Node-RED's editor API loads it: what `node-red admin hash-pw` hashes with. */
function nodeRedBcrypt(): { hashSync(password: string, rounds: number): string } {
  const fromNodeRed = createRequire(createRequire(import.meta.url).resolve('node-red/package.json'))
  return createRequire(fromNodeRed.resolve('@node-red/editor-api/package.json'))('bcryptjs')
}

describe('argon2 verifier', () => {
  it('hashes with argon2id and the OWASP parameters, salted', async () => {
    const hash = await hashPassword('correct horse')
    expect(hash).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/)
    expect(await hashPassword('correct horse')).not.toBe(hash)
  })

  it('verifies the right password and refuses a wrong one', async () => {
    const verifier = await createArgon2Verifier()
    const hash = await hashPassword('correct horse')
    expect(await verifier.verify(hash, 'correct horse')).toBe(true)
    expect(await verifier.verify(hash, 'correct horse ')).toBe(false)
    expect(await verifier.verify(hash, '')).toBe(false)
  })

  it('answers false, never throws, for a malformed hash', async () => {
    const verifier = await createArgon2Verifier()
    for (const garbage of [
      '',
      'plain-text',
      '$argon2id$',
      '$argon2id$v=19$m=19456,p=1,t=2$!!!$???',
      '$2b$10$abcdefghijklmnopqrstuv',
    ]) {
      expect(await verifier.verify(garbage, 'anything')).toBe(false)
    }
  })

  it('makes a fresh dummy hash that no password matches', async () => {
    const [a, b] = await Promise.all([createArgon2Verifier(), createArgon2Verifier()])
    expect(a.dummyHash).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/)
    expect(a.dummyHash).not.toBe(b.dummyHash)
    expect(await a.verify(a.dummyHash, '')).toBe(false)
    expect(await a.verify(a.dummyHash, 'password')).toBe(false)
  })

  it('makes its dummy hash at the parameters of real hashes, so it costs a full verification', async () => {
    const argon2 = await import('argon2')
    const verifier = await createArgon2Verifier()
    const real = await hashPassword('correct horse')
    // Same salt and hash lengths as a real hash, and nothing to rehash at these parameters.
    const parts = (hash: string) => hash.split('$').map((part) => part.length)
    expect(parts(verifier.dummyHash)).toEqual(parts(real))
    expect(argon2.needsRehash(verifier.dummyHash, ARGON2_OPTIONS)).toBe(false)
  })

  it('verifies the bcrypt hashes of Node-RED settings ($2a$, $2b$, $2y$), so users move without new passwords', async () => {
    const verifier = await createArgon2Verifier()
    const made = nodeRedBcrypt().hashSync('correct horse', 8)
    expect(made).toMatch(/^\$2b\$08\$/)
    for (const [hash, password] of [
      [made, 'correct horse'],
      [made.replace('$2b$', '$2a$'), 'correct horse'],
      [made.replace('$2b$', '$2y$'), 'correct horse'],
    ] as const) {
      expect(await verifier.verify(hash, password), hash.slice(0, 4)).toBe(true)
      expect(await verifier.verify(hash, `${password}!`), hash.slice(0, 4)).toBe(false)
    }
  })

  it('tells what a hash costs by its algorithm and parameters, whatever their order', async () => {
    expect(costOf(await hashPassword('x'))).toBe('argon2id m=19456,p=1,t=2')
    expect(costOf('$argon2id$v=19$t=2,m=19456,p=1$c2FsdA$aGFzaA')).toBe('argon2id m=19456,p=1,t=2')
    expect(costOf(nodeRedBcrypt().hashSync('x', 8))).toBe('bcrypt 08')
    expect(costOf('$2y$12$.nkzJ0fZOHDhnyAfK9WCX.3iAmAbWBRaZEA1jbL1HV9duZqYAKpxC')).toBe('bcrypt 12')
    expect(costOf('plain')).toBeNull()
  })

  it('still answers right and wrong for every user when argon2 and bcrypt users are mixed, the dummy matching nothing', async () => {
    const verifier = await createArgon2Verifier()
    const argon = await hashPassword('argon pw')
    const bcrypt = nodeRedBcrypt().hashSync('bcrypt pw', 8)
    verifier.useHashes?.([argon, bcrypt])
    expect(await verifier.verify(argon, 'argon pw')).toBe(true)
    expect(await verifier.verify(argon, 'bcrypt pw')).toBe(false)
    expect(await verifier.verify(bcrypt, 'bcrypt pw')).toBe(true)
    expect(await verifier.verify(bcrypt, 'argon pw')).toBe(false)
    expect(await verifier.verify(verifier.dummyHash, 'argon pw')).toBe(false)
    expect(await verifier.verify(verifier.dummyHash, 'bcrypt pw')).toBe(false)
    expect(await verifier.verify('garbage', '')).toBe(false)
  })
})
