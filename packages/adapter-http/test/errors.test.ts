import { describe, expect, it } from 'vitest'
import { errorAnswerOf, toResponse } from '../src/errors.js'

describe('too_many_sign_ins', () => {
  it('answers 429 with Retry-After 60 when the client’s address has too many sign-ins waiting to finish', async () => {
    const response = toResponse(errorAnswerOf({ code: 'too_many_sign_ins', scope: 'address' }))
    expect(response.status).toBe(429)
    expect(response.headers.get('Retry-After')).toBe('60')
    expect(response.headers.get('Content-Type')).toBe('application/json')
    expect(await response.json()).toEqual({
      code: 'too_many_sign_ins',
      message: 'Too many sign-ins from your address are waiting to finish; try again in a minute',
    })
  })

  it('answers 503 with Retry-After 30 when too many sign-ins are waiting to finish in all', async () => {
    const response = toResponse(errorAnswerOf({ code: 'too_many_sign_ins', scope: 'all' }))
    expect(response.status).toBe(503)
    expect(response.headers.get('Retry-After')).toBe('30')
    expect(await response.json()).toEqual({
      code: 'too_many_sign_ins',
      message: 'Too many sign-ins are waiting to finish here right now; try again shortly',
    })
  })
})
