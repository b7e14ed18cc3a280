// Stopping the built `flowadmin` command with signals while requests are in flight, over a real
// socket and a real SQLite file.
import { existsSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import * as path from 'node:path'
import { beforeAll, describe, expect, it } from 'vitest'
import { hashPassword } from '../src/index.js'
import { type CliRun, copyDemo, logEntries, useUserDir } from './cli-process.js'
import { logIn } from './password-grant.js'

const MODULE = '@flowadmin-examples/text-tools'

const dir = useUserDir('shutdown', copyDemo)
let passwordHash: string

beforeAll(async () => {
  passwordHash = await hashPassword('admin-pw')
})

async function startWith(settings: object = {}) {
  const adminAuth = {
    type: 'credentials',
    users: [{ username: 'admin', password: passwordHash, permissions: '*' }],
  }
  const started = await dir.start({ settings: { adminAuth, auditLog: 'off', ...settings } })
  const res = await logIn(started.url, 'admin-pw')
  expect(res.status).toBe(200)
  const { access_token: token } = (await res.json()) as { access_token: string }
  return { ...started, port: Number(new URL(started.url).port), token }
}

/** Resolves once stderr holds `text`. */
function stderrShows(run: CliRun, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = () => {
      if (!run.stderr.includes(text)) return
      run.child.stderr?.off('data', check)
      resolve()
    }
    run.child.stderr?.on('data', check)
    run.exited.then(() => reject(new Error(`flowadmin ended before printing "${text}":\n${run.stderr}`)))
    check()
  })
}

/**
 * A PUT whose headers the server has read (it answered `100 Continue`), its body not yet sent:
 * a request in flight. `finish()` sends the body and resolves with everything the server sent.
 */
async function requestInFlight(port: number, token: string, body: string) {
  const socket: Socket = connect(port, '127.0.0.1')
  let received = ''
  socket.setEncoding('utf8').on('data', (chunk: string) => {
    received += chunk
  })
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(received)))
  socket.on('error', () => {})
  socket.write(
    `PUT /nodes/${encodeURIComponent(MODULE)} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
      `Authorization: Bearer ${token}\r\nContent-Type: application/json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nExpect: 100-continue\r\n\r\n`,
  )
  await new Promise<void>((resolve, reject) => {
    const check = () => {
      if (!received.startsWith('HTTP/1.1 100 Continue\r\n\r\n')) return
      socket.off('data', check)
      resolve()
    }
    socket.on('data', check)
    closed.then(() => reject(new Error(`closed before 100 Continue: ${received}`)))
  })
  return {
    closed,
    finish() {
      socket.write(body)
      return closed
    },
  }
}

/** Whether a new TCP connection to the port is refused. */
function refused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    socket.once('connect', () => {
      socket.destroy()
      resolve(false)
    })
    socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'))
  })
}

describe('stopping on a signal', () => {
  it('finishes a toggle in flight at SIGTERM, persists it, refuses new connections, exits 0', async () => {
    const { run, port, token } = await startWith()
    const toggle = await requestInFlight(port, token, '{"enabled":false}')

    run.child.kill('SIGTERM')
    await stderrShows(run, '"signal":"SIGTERM"')
    expect(await refused(port)).toBe(true)

    const answer = await toggle.finish()
    const [head, body] = answer.slice(answer.indexOf('\r\n\r\n') + 4).split('\r\n\r\n')
    expect(head).toMatch(/^HTTP\/1\.1 200 OK\r\n/)
    const module = JSON.parse(body as string) as { nodes: Array<{ enabled: boolean }> }
    expect(module.nodes.map((set) => set.enabled)).toEqual([false, false])

    expect(await run.exited).toBe(0)
    expect(logEntries(run.stderr).map((entry) => entry.msg)).toEqual([
      'no new connections; finishing requests in flight, then stopping',
      'stopped',
    ])
    // The store was closed cleanly: everything is in the database file, no log is left.
    expect(existsSync(path.join(dir.userDir, 'flowadmin.db-wal'))).toBe(false)

    const again = await startWith()
    const res = await fetch(`${again.url}/nodes/${MODULE}`, { headers: { Authorization: `Bearer ${token}` } })
    expect(res.status).toBe(200)
    expect(((await res.json()) as typeof module).nodes.map((set) => set.enabled)).toEqual([false, false])
  })

  it('cuts what is still in flight after shutdownTimeout, and still exits 0', async () => {
    const { run, port, token } = await startWith({ shutdownTimeout: 300 })
    const stuck = await requestInFlight(port, token, '{"enabled":false}')
    run.child.kill('SIGTERM')
    expect(await run.exited).toBe(0)
    expect(await stuck.closed).toBe('HTTP/1.1 100 Continue\r\n\r\n')
    expect(logEntries(run.stderr)[0]).toMatchObject({ signal: 'SIGTERM', graceSeconds: 0.3 })
  })

  it('exits at once on a second signal, without waiting for requests in flight', async () => {
    const { run, port, token } = await startWith({ shutdownTimeout: 3_600_000 })
    await requestInFlight(port, token, '{"enabled":false}')
    run.child.kill('SIGTERM')
    await stderrShows(run, '"signal":"SIGTERM"')
    run.child.kill('SIGINT')
    expect(await run.exited).toBe(1)
    expect(logEntries(run.stderr).map((entry) => [entry.level, entry.signal, entry.msg])).toEqual([
      ['info', 'SIGTERM', 'no new connections; finishing requests in flight, then stopping'],
      ['warn', 'SIGINT', 'signal again, exiting now'],
    ])
  })
})
