import { type ChildProcess, execFileSync, spawn } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rename, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { createInterface } from 'node:readline'
import type { DomainEvent } from '@flowadmin/core'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createAuditLog, formatAuditLine, StartupError } from '../src/index.js'
import { requireBuild } from './cli-process.js'

const at = Date.UTC(2026, 0, 2, 3, 4, 5, 678)
const actor = { username: 'admin', clientId: 'service-admin', address: '127.0.0.1' }
const events: DomainEvent[] = [
  { type: 'login.succeeded', at, ...actor },
  { type: 'login.failed', at, username: 'ghost', clientId: null, address: '10.0.0.9' },
  { type: 'login.throttled', at, retryAfter: 42, ...actor },
  { type: 'permission.denied', at, permission: 'nodes.write', ...actor },
  { type: 'token.revoked', at, owner: 'viewer', id: 'Kx9pub', ...actor },
  { type: 'module.disabled', at, module: '@acme/text', sets: ['@acme/text/upper'], ...actor },
  {
    type: 'module.enabled',
    at,
    module: 'greeting',
    sets: ['greeting/greeting'],
    username: null,
    clientId: null,
    address: '::1',
  },
]

let dir: string
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'flowadmin-audit-'))
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('audit lines', () => {
  it('writes one JSON object a line: level, time, event, user, client, address, then the details', () => {
    const lines = events.map(formatAuditLine)
    for (const line of lines) expect(line.endsWith('\n') && !line.slice(0, -1).includes('\n')).toBe(true)
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      {
        level: 'info',
        time: '2026-01-02T03:04:05.678Z',
        event: 'login.succeeded',
        user: 'admin',
        client: 'service-admin',
        address: '127.0.0.1',
      },
      {
        level: 'info',
        time: '2026-01-02T03:04:05.678Z',
        event: 'login.failed',
        user: 'ghost',
        client: null,
        address: '10.0.0.9',
      },
      {
        level: 'info',
        time: '2026-01-02T03:04:05.678Z',
        event: 'login.throttled',
        user: 'admin',
        client: 'service-admin',
        address: '127.0.0.1',
        retryAfter: 42,
      },
      {
        level: 'info',
        time: '2026-01-02T03:04:05.678Z',
        event: 'permission.denied',
        user: 'admin',
        client: 'service-admin',
        address: '127.0.0.1',
        permission: 'nodes.write',
      },
      {
        level: 'info',
        time: '2026-01-02T03:04:05.678Z',
        event: 'token.revoked',
        user: 'admin',
        client: 'service-admin',
        address: '127.0.0.1',
        owner: 'viewer',
        id: 'Kx9pub',
      },
      {
        level: 'info',
        time: '2026-01-02T03:04:05.678Z',
        event: 'module.disabled',
        user: 'admin',
        client: 'service-admin',
        address: '127.0.0.1',
        module: '@acme/text',
        sets: ['@acme/text/upper'],
      },
      {
        level: 'info',
        time: '2026-01-02T03:04:05.678Z',
        event: 'module.enabled',
        user: null,
        client: null,
        address: '::1',
        module: 'greeting',
        sets: ['greeting/greeting'],
      },
    ])
    expect(Object.keys(JSON.parse(lines[2] as string))).toEqual([
      'level',
      'time',
      'event',
      'user',
      'client',
      'address',
      'retryAfter',
    ])
  })

  it('never writes a password or a token, even if an event carried one', () => {
    const leaky = {
      type: 'login.failed',
      at,
      ...actor,
      password: 'hunter2',
      token: 'tok-123',
      access_token: 'tok-456',
      clientSecret: 'shh',
    } as DomainEvent
    const line = formatAuditLine(leaky)
    for (const secret of ['hunter2', 'tok-123', 'tok-456', 'shh']) expect(line).not.toContain(secret)
    expect(JSON.parse(line)).toEqual({
      level: 'info',
      time: '2026-01-02T03:04:05.678Z',
      event: 'login.failed',
      user: 'admin',
      client: 'service-admin',
      address: '127.0.0.1',
    })
  })

  it('escapes every control and format character: one printable line that parses back to the name sent', () => {
    const name = 'ad\nmin\r\u0000\u001b[31m\u007f\u0085\u009b\u200b\u202e\u2028\u2029\ufeff\u{e0041}"x\\'
    const line = formatAuditLine({ type: 'login.failed', at, username: name, clientId: name, address: '::1' })
    expect(line.endsWith('\n')).toBe(true)
    expect(line.slice(0, -1)).toMatch(/^[\x20-\x7e]+$/)
    expect(line).toContain('\\u202e')
    expect(JSON.parse(line)).toMatchObject({ user: name, client: name, address: '::1' })
  })

  it('clips huge user and client names, so a flood of them cannot flood the log', () => {
    const line = JSON.parse(
      formatAuditLine({
        type: 'login.failed',
        at: Date.UTC(2026, 0, 1),
        username: 'u'.repeat(70_000),
        clientId: 'c'.repeat(300),
        address: '127.0.0.1',
      }),
    )
    expect(line.user).toBe(`${'u'.repeat(256)}… (70000 characters)`)
    expect(line.client).toBe(`${'c'.repeat(256)}… (300 characters)`)
  })

  it('goes to stdout by default', () => {
    const written: string[] = []
    const log = createAuditLog('stdout', (text) => written.push(text))
    log.emit(events[0] as DomainEvent)
    log.close()
    expect(written).toEqual([formatAuditLine(events[0] as DomainEvent)])
  })

  it('writes nothing when off', () => {
    const written: string[] = []
    createAuditLog('off', (text) => written.push(text)).emit(events[0] as DomainEvent)
    expect(written).toEqual([])
  })

  it('appends to a file, keeping what was there', async () => {
    const file = path.join(dir, 'audit.log')
    const first = createAuditLog({ file })
    first.emit(events[0] as DomainEvent)
    first.close()
    const second = createAuditLog({ file })
    second.emit(events[4] as DomainEvent)
    second.emit(events[4] as DomainEvent)
    second.close()
    second.emit(events[5] as DomainEvent)
    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n')
    expect(lines.map((line) => JSON.parse(line).event)).toEqual([
      'login.succeeded',
      'token.revoked',
      'token.revoked',
    ])
  })

  it('reopens the file by its name, so lines after a rotation go to a new file', async () => {
    const file = path.join(dir, 'audit.log')
    const log = createAuditLog({ file })
    log.emit(events[0] as DomainEvent)
    await rename(file, `${file}.1`)
    log.emit(events[1] as DomainEvent)
    log.reopen()
    log.emit(events[2] as DomainEvent)
    log.close()
    const rotated = (await readFile(`${file}.1`, 'utf8')).trimEnd().split('\n')
    expect(rotated.map((line) => JSON.parse(line).event)).toEqual(['login.succeeded', 'login.failed'])
    expect(JSON.parse(await readFile(file, 'utf8')).event).toBe('login.throttled')
  })

  it('keeps writing to the open file when reopening fails', async () => {
    const sub = path.join(dir, 'logs')
    await mkdir(sub)
    const file = path.join(sub, 'audit.log')
    const log = createAuditLog({ file })
    await rename(sub, path.join(dir, 'moved'))
    expect(() => log.reopen()).toThrow(`cannot open the audit log ${file}`)
    log.emit(events[0] as DomainEvent)
    log.close()
    expect(JSON.parse(await readFile(path.join(dir, 'moved', 'audit.log'), 'utf8')).event).toBe(
      'login.succeeded',
    )
  })

  it('drops what a full disk refuses, says so once, and closes without waiting', () => {
    const reports: Array<{ message: string; fields: Record<string, unknown> }> = []
    const log = createAuditLog({ file: '/dev/full' }, undefined, (message, fields) =>
      reports.push({ message, fields }),
    )
    for (const event of events.slice(0, 3)) expect(() => log.emit(event as DomainEvent)).not.toThrow()
    expect(reports).toEqual([
      {
        message: 'audit log lines are being dropped: a line could not be written',
        fields: { file: '/dev/full', reason: expect.stringContaining('ENOSPC') },
      },
    ])
    log.close()
  })

  it('ends a line cut short by a write error, so every later line parses, and says how many were dropped', async () => {
    requireBuild()
    const file = path.join(dir, 'audit.log')
    // A process that may write 1 KiB a file: the line crossing it is cut short, later ones fail.
    const child = spawn(
      'bash',
      [
        '-c',
        'ulimit -S -f 1; exec "$@"',
        'bash',
        process.execPath,
        '--input-type=module',
        '-e',
        AUDIT_CHILD,
        file,
      ],
      { stdio: ['pipe', 'pipe', 'inherit'] },
    )
    const said = lines(child)
    const ask = async (command: string) => {
      child.stdin?.write(`${command}\n`)
      return (await said.next()).value as string
    }
    try {
      expect(await ask('emit 12')).toBe('emitted')
      // The file may grow without bound again: the same file takes lines once more.
      execFileSync('prlimit', [`--pid=${child.pid}`, '--fsize=unlimited:'])
      expect(await ask('emit 2')).toBe('emitted')
      const reports = JSON.parse(await ask('close'))
      const text = await readFile(file, 'utf8')
      const parsed = text
        .trimEnd()
        .split('\n')
        .map((line) => {
          try {
            return JSON.parse(line).event as string
          } catch {
            return null
          }
        })
      const written = parsed.filter((event) => event !== null)
      // Whole lines up to the limit, one cut short, then the two written after it.
      expect(parsed.filter((event) => event === null)).toHaveLength(1)
      expect(parsed.at(-3)).toBeNull()
      expect(written.slice(-2)).toEqual(['module.enabled', 'module.enabled'])
      const dropped = 12 - (written.length - 2)
      expect(reports).toEqual([
        {
          message: 'audit log lines are being dropped: a line could not be written',
          fields: { file, reason: expect.stringContaining('EFBIG') },
        },
        { message: 'audit log written again', fields: { file, dropped } },
      ])
      expect(dropped).toBeGreaterThan(1)
    } finally {
      child.kill()
    }
  })

  it('fails at start, naming the file, when it cannot be opened', () => {
    const file = path.join(dir, 'missing', 'audit.log')
    expect(() => createAuditLog({ file })).toThrow(StartupError)
    expect(() => createAuditLog({ file })).toThrow(`cannot open the audit log ${file}`)
  })

  it('never throws into the caller when stdout fails', () => {
    const log = createAuditLog('stdout', () => {
      throw new Error('EPIPE')
    })
    expect(() => log.emit(events[0] as DomainEvent)).not.toThrow()
  })
})

/** The child of the cut-short test: an audit log on argv[1], driven by lines on stdin. */
const AUDIT_CHILD = `
import { createInterface } from "node:readline"
const { createAuditLog } = await import(${JSON.stringify(new URL('../dist/index.js', import.meta.url).href)})
const reports = []
const log = createAuditLog({ file: process.argv[1] }, undefined, (message, fields) => reports.push({ message, fields }))
const event = { type: "module.enabled", at: 0, module: "greeting", sets: ["greeting/greeting"], username: "admin", clientId: "service-admin", address: "::1" }
for await (const line of createInterface({ input: process.stdin })) {
  const [command, count] = line.split(" ")
  if (command === "emit") {
    for (let i = 0; i < Number(count); i++) log.emit(event)
    console.log("emitted")
  } else if (command === "close") {
    log.close()
    console.log(JSON.stringify(reports))
  }
}
`

/** The lines a child prints, one at a time. */
function lines(child: ChildProcess): AsyncIterator<string> {
  if (child.stdout === null) throw new Error('no stdout')
  return createInterface({ input: child.stdout })[Symbol.asyncIterator]()
}
