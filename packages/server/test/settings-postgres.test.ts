import { describe, expect, it } from 'vitest'
import { parse, refusal } from './settings-parse.js'

describe('the postgres settings', () => {
  it('keep the URL, pool size and timeout given', () => {
    const settings = parse({
      storage: 'postgres',
      postgres: {
        url: 'postgresql://flow:pw@db.internal:6432/flows?sslmode=require',
        pool: 25,
        timeoutMs: 2500,
      },
    })
    expect(settings.storage).toBe('postgres')
    expect(settings.postgres).toEqual({
      url: 'postgresql://flow:pw@db.internal:6432/flows?sslmode=require',
      pool: 25,
      timeoutMs: 2500,
    })
  })

  it('default to no URL (DATABASE_URL or the PG* variables then), a pool of 10 and 5 seconds', () => {
    expect(parse({ storage: 'postgres' }).postgres).toEqual({ url: null, pool: 10, timeoutMs: 5000 })
  })

  it.each([
    [
      { url: 'mysql://a@b/c' },
      'settings.json: postgres.url: must be a URL such as "postgres://user:password@host:5432/database"',
    ],
    [{ url: 42 }, 'settings.json: postgres.url: must be a string'],
    [{ pool: 0 }, 'settings.json: postgres.pool: must be at least 1'],
    [{ pool: 2.5 }, 'settings.json: postgres.pool: must be a whole number'],
    [{ timeoutMs: 10 }, 'settings.json: postgres.timeoutMs: must be at least 100'],
    [{ host: 'db' }, 'settings.json: postgres.host: unknown setting'],
  ])('refuse %j', (postgres, message) => {
    expect(refusal({ storage: 'postgres', postgres })).toBe(message)
  })

  it('never repeat a refused URL, which may hold a password', () => {
    const message = refusal({ storage: 'postgres', postgres: { url: 'postgres//admin:hunter2@db/flows' } })
    expect(message).not.toContain('hunter2')
  })

  it('are refused without storage "postgres", rather than silently ignored', () => {
    expect(refusal({ postgres: { url: 'postgres://db/flows' } })).toBe(
      'settings.json: postgres: is set, but storage is not "postgres"',
    )
  })
})
