import { createHash } from 'node:crypto'
import { existsSync, readFileSync } from 'node:fs'
import { afterAll, expect, it } from 'vitest'
import { ADDRESS, adminLogin, openCore } from './core.js'
import { createTempFolder } from './temp.js'

const temp = createTempFolder()
afterAll(() => temp.remove())

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** Every way a token could sit in the bytes: as text in any letter case, or as its raw bytes. */
function expectNoToken(bytes: Buffer, token: string) {
  expect(bytes.includes(Buffer.from(token))).toBe(false)
  expect(bytes.toString('latin1').toLowerCase().includes(token.toLowerCase())).toBe(false)
  expect(bytes.includes(Buffer.from(token, 'base64url'))).toBe(false)
  expect(bytes.includes(Buffer.from(token, 'utf16le'))).toBe(false)
}

it('stores tokens as hashes only: no issued token is anywhere in the database or its log', async () => {
  const path = temp.file()
  const { core, stores } = openCore(path)
  const tokens: string[] = []
  for (let i = 0; i < 5; i++) {
    const issued = await core.login(adminLogin(), ADDRESS)
    if (!issued.ok) throw new Error(`login failed: ${issued.error.code}`)
    tokens.push(issued.value.accessToken)
  }
  for (const token of tokens) expect((await core.authenticate(token)).ok).toBe(true)

  // While the connection is open the records sit in the write-ahead log.
  expect(existsSync(`${path}-wal`)).toBe(true)
  const open = Buffer.concat([readFileSync(path), readFileSync(`${path}-wal`)])
  for (const token of tokens) {
    expect(open.includes(Buffer.from(sha256(token)))).toBe(true) // the bytes do hold the records
    expectNoToken(open, token)
  }

  await stores.close()
  expect(existsSync(`${path}-wal`)).toBe(false)
  const closed = readFileSync(path)
  for (const token of tokens) {
    expect(closed.includes(Buffer.from(sha256(token)))).toBe(true)
    expectNoToken(closed, token)
  }
})
