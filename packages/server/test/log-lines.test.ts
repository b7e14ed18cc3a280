// The server's log and audit lines hold what a request sent (a path, a username) in JSON fields of
// their own: whatever they contain, every line parses as one JSON object, and none is forged.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createLogger, hashPassword, type RunningServer, startServer } from '../src/index.js'
import { type CapturedLog, captureLog } from './log-capture.js'

const FORGED = '{"level":"error","time":"2026-01-01T00:00:00.000Z","msg":"forged","address":"192.0.2.9"}'
/** Ways to end a line: for JSON, a terminal, or a tool that reads Unicode lines. */
const BREAKS = ['\n', '\r\n', '\r', '\u2028', '\u0085']

let hash: string
let userDir: string
let log: CapturedLog
let audit: string[]
let server: RunningServer

beforeAll(async () => {
  hash = await hashPassword('admin-password')
})
beforeEach(async () => {
  userDir = await mkdtemp(path.join(tmpdir(), 'flowadmin-log-lines-'))
  log = captureLog()
  audit = []
  server = await startServer({
    port: 0,
    userDir,
    settings: {
      storage: 'memory',
      adminAuth: { type: 'credentials', users: [{ username: 'admin', password: hash, permissions: '*' }] },
    },
    stdout: (line) => audit.push(line),
    logger: log.logger,
  })
})
afterEach(async () => {
  await server.close()
  await rm(userDir, { recursive: true, force: true })
})

/** Every line is one line of printable text and one JSON object; none is the forged one. */
function expectHonest(lines: string[]): Array<Record<string, unknown>> {
  expect(lines.length).toBeGreaterThan(0)
  return lines.map((line) => {
    expect(line.endsWith('\n')).toBe(true)
    expect(line.slice(0, -1)).toMatch(/^[\x20-\x7e]+$/)
    const entry = JSON.parse(line)
    expect(entry).toBeTypeOf('object')
    expect(entry.msg).not.toBe('forged')
    expect(entry.address).not.toBe('192.0.2.9')
    return entry
  })
}

describe('log lines', () => {
  it('keep a path with encoded line breaks in the path field of one line', async () => {
    // Every request meets an unexpected failure, which is logged with the request's path.
    server.core.authorize = async () => {
      throw new Error('the store fell over')
    }
    const paths = BREAKS.map((brk) => `/nodes/x${encodeURI(`${brk}${FORGED}`)}`)
    for (const sent of paths) expect((await fetch(`${server.url}${sent}`)).status, sent).toBe(500)

    const entries = expectHonest(log.lines).filter(
      (entry) => entry.msg === 'unexpected error answering a request',
    )
    expect(entries.map((entry) => entry.path)).toEqual(BREAKS.map((brk) => `/nodes/x${brk}${FORGED}`))
    for (const entry of entries) {
      expect(entry).toMatchObject({
        level: 'error',
        method: 'GET',
        err: { type: 'Error', message: 'the store fell over', stack: expect.stringContaining('Error:') },
      })
    }
  })

  it('keep a username with line breaks in the user field of one audit line, and out of the log', async () => {
    const usernames = BREAKS.map((brk) => `x${brk}${FORGED}`)
    for (const username of usernames) {
      const response = await fetch(`${server.url}/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          client_id: 'service-admin',
          grant_type: 'password',
          scope: '*',
          username,
          password: 'wrong',
        }),
      })
      expect(response.status).toBe(401)
    }
    const events = expectHonest(audit)
    expect(events.map((event) => [event.event, event.user])).toEqual(
      usernames.map((username) => ['login.failed', username]),
    )
    expect(log.lines.join('')).not.toContain('forged')
  })

  it('in the pretty form too, keep what was sent escaped, on the line of its message', () => {
    const written: string[] = []
    const pretty = createLogger({ pretty: true, write: (text) => written.push(text) })
    pretty.error(
      { path: `/nodes/x\u2028\u202e${FORGED}`, password: 'hunter2' },
      'unexpected error answering a request',
    )
    const text = written.join('')
    expect(text).toMatch(/^\[[^\]]+\] ERROR: unexpected error answering a request\n/)
    expect(text).toContain(`path: "/nodes/x\\u2028\\u202e{\\"level\\":\\"error\\"`)
    expect(text).toContain('password: "[redacted]"')
    expect(text).not.toMatch(/[\u2028\u202e]/)
    expect(text).not.toContain('hunter2')
  })

  it('redact secrets wherever a line would carry them', () => {
    log.logger.warn(
      {
        password: 'hunter2',
        headers: { authorization: 'Bearer tok-1' },
        body: { access_token: 'tok-2', token: 'tok-3', refresh_token: 'tok-4' },
      },
      'a request',
    )
    const [line] = log.lines
    for (const secret of ['hunter2', 'tok-1', 'tok-2', 'tok-3', 'tok-4']) expect(line).not.toContain(secret)
    expect(JSON.parse(line as string)).toMatchObject({
      password: '[redacted]',
      headers: { authorization: '[redacted]' },
      body: { access_token: '[redacted]', token: '[redacted]', refresh_token: '[redacted]' },
    })
  })
})
