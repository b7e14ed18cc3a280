import { describe, expect, test } from 'vitest'
import { messageOf } from '../src/index.js'

describe('messageOf', () => {
  test('an Error gives its message, without the stack', () => {
    expect(messageOf(new TypeError('bad input'))).toBe('bad input')
  })

  test('anything else thrown gives itself as text', () => {
    expect(messageOf('plain words')).toBe('plain words')
    expect(messageOf(42)).toBe('42')
    expect(messageOf(undefined)).toBe('undefined')
  })

  test('an AggregateError gives its first inner error', () => {
    const error = new AggregateError([new Error('connect ECONNREFUSED ::1:5432'), new Error('second')], '')
    expect(messageOf(error)).toBe('connect ECONNREFUSED ::1:5432')
  })

  test('an empty message falls back to the code, then to "unknown error"', () => {
    expect(messageOf(Object.assign(new Error(''), { code: 'ECONNRESET' }))).toBe('ECONNRESET')
    expect(messageOf(new Error(''))).toBe('unknown error')
  })
})
