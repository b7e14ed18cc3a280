// Secret flow variables sealed for the store: they open for their own scope and name under the
// same key only, and a sealed value shows nothing of the secret.
import { describe, expect, it } from 'vitest'
import { createVariableSealer } from '../src/adapters/variable-sealer.js'

const KEY = 'the key of flow variables in this test, 0123456789'

describe('the variable sealer', () => {
  it('opens what it sealed, for the same context only, and under the same key only', () => {
    const sealer = createVariableSealer(KEY)
    const sealed = sealer.seal('group:line-1\nAPI_KEY', 'k-123 ✓')
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/)
    expect(sealed).not.toContain('k-123')
    expect(sealer.open('group:line-1\nAPI_KEY', sealed)).toBe('k-123 ✓')
    expect(sealer.open('group:line-2\nAPI_KEY', sealed)).toBeNull()
    expect(sealer.open('group:line-1\nOTHER', sealed)).toBeNull()
    expect(createVariableSealer(`${KEY}!`).open('group:line-1\nAPI_KEY', sealed)).toBeNull()
    expect(sealer.seal('group:line-1\nAPI_KEY', 'k-123 ✓')).not.toBe(sealed)
  })

  it('opens nothing from a damaged or foreign value', () => {
    const sealer = createVariableSealer(KEY)
    const sealed = sealer.seal('instance:press-1\nX', '')
    expect(sealer.open('instance:press-1\nX', sealed)).toBe('')
    for (const bad of ['', 'v1', 'v2.a.b', `${sealed}x`, sealed.replace('v1.', 'v1.AA'), 'v1.AAAA.AAAA']) {
      expect(sealer.open('instance:press-1\nX', bad)).toBeNull()
    }
  })
})
