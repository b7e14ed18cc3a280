import { webDigest } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'

describe('the Web Crypto digest', () => {
  it('computes HMAC-SHA-256 as RFC 4231 test case 2 gives it', async () => {
    expect(await webDigest.hmacSha256('Jefe', 'what do ya want for nothing?')).toBe(
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    )
  })
})
