// Importing and using the server's pieces leaves the process as it was: thread priorities,
// environment, signal handlers. Only the `flowadmin` command tunes its own process.
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { getPriority, tmpdir } from 'node:os'
import * as path from 'node:path'
import { waitFor } from '@flowadmin/testkit'
import { beforeAll, describe, expect, it } from 'vitest'
import { HASHING_NICENESS } from '../src/cli/process-tuning.js'
import { createArgon2Verifier, hashPassword, startServer } from '../src/index.js'
import { startBuiltServer, useServerFolder, writeSettings } from './cli-process.js'
import { captureLog } from './log-capture.js'

/** The niceness of every thread of process `pid`, by thread id. */
function threadNiceness(pid: number | 'self'): Map<number, number> {
  const niceness = new Map<number, number>()
  for (const tid of readdirSync(`/proc/${pid}/task`).map(Number)) {
    try {
      niceness.set(tid, getPriority(tid))
    } catch {
      // The thread ended between the listing and the look.
    }
  }
  return niceness
}

/** SCHED_IDLE's number in the kernel's scheduling policies. */
const SCHED_IDLE = 5

/** Each thread's scheduling policy (0 is the normal one), from /proc/PID/task/TID/stat. */
function threadPolicy(pid: number): Map<number, number> {
  const policy = new Map<number, number>()
  for (const tid of readdirSync(`/proc/${pid}/task`).map(Number)) {
    try {
      // The fields after the command's closing parenthesis; the policy is the 41st field of all.
      const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
      policy.set(tid, Number(fields[38]))
    } catch {
      // The thread ended between the listing and the look.
    }
  }
  return policy
}

/** Where `command` is on the PATH; fails saying what to install where it is missing. */
function installed(command: string, debianPackage: string): string {
  try {
    return execFileSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' }).trim()
  } catch {
    throw new Error(`${command} is not installed: apt-get install ${debianPackage}`)
  }
}

/**
 * Writes into `dir` an executable `name` that runs `target` with its arguments and appends a line
 * to `log`: `before` writes it first (`$*`, then exec), otherwise it is written once `target`
 * has ended (`<exit status> $*`).
 */
async function recordingWrapper(
  dir: string,
  name: string,
  target: string,
  log: string,
  when: 'before' | 'after',
): Promise<void> {
  const lines =
    when === 'before'
      ? ['#!/bin/sh', `printf '%s\\n' "$*" >> '${log}'`, `exec '${target}' "$@"`]
      : [
          '#!/bin/sh',
          `'${target}' "$@"`,
          'status=$?',
          `printf '%s %s\\n' "$status" "$*" >> '${log}'`,
          'exit $status',
        ]
  await writeFile(path.join(dir, name), `${lines.join('\n')}\n`, { mode: 0o755 })
}

/** The lines of `file` so far; none while it does not exist. */
const linesOf = (file: string): string[] =>
  existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => line !== '')
    : []

const EVENTS = [
  'SIGHUP',
  'SIGINT',
  'SIGTERM',
  'SIGUSR2',
  'exit',
  'beforeExit',
  'uncaughtException',
  'unhandledRejection',
] as const
const processState = () => ({
  env: { ...process.env },
  listeners: EVENTS.map((event) => process.listenerCount(event)),
})

describe('the library', () => {
  it('changes no thread priority, environment variable, signal or exit handler when used', async () => {
    const mainNiceness = getPriority(process.pid)
    const before = processState()
    const threadsBefore = threadNiceness('self')

    // A verification (libuv's thread pool starts with the first hash) and a whole server.
    const verifier = await createArgon2Verifier()
    const hash = await hashPassword('correct horse')
    expect(await verifier.verify(hash, 'correct horse')).toBe(true)
    const userDir = await mkdtemp(path.join(tmpdir(), 'flowadmin-effects-'))
    try {
      const server = await startServer({
        port: 0,
        userDir,
        settings: {
          storage: 'memory',
          auditLog: { file: path.join(userDir, 'audit.log') },
          adminAuth: {
            type: 'credentials',
            users: [{ username: 'admin', password: hash, permissions: '*' }],
          },
        },
        logger: captureLog().logger,
      })
      const login = await fetch(`${server.url}/auth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: 'client_id=service-admin&grant_type=password&scope=*&username=admin&password=correct+horse',
      })
      expect(login.status).toBe(200)
      await server.close()
      expect(JSON.parse(await readFile(path.join(userDir, 'audit.log'), 'utf8'))).toMatchObject({
        event: 'login.succeeded',
        user: 'admin',
      })
    } finally {
      await rm(userDir, { recursive: true, force: true })
    }

    const threadsAfter = threadNiceness('self')
    // Every thread, those of libuv's pool and V8's helpers among them, keeps the process's niceness.
    expect(threadsAfter.size).toBeGreaterThan(1)
    for (const [tid, niceness] of threadsBefore) {
      if (threadsAfter.has(tid)) expect(threadsAfter.get(tid), `thread ${tid}`).toBe(niceness)
    }
    expect(new Set(threadsAfter.values())).toEqual(new Set([mainNiceness]))
    expect(processState()).toEqual(before)
  })
})

describe('the flowadmin command', () => {
  const folder = useServerFolder('effects-cli')
  let settings: string
  /** Holds the PATH folders of the tests, apart from the server's files. */
  let tools: string
  beforeAll(async () => {
    tools = path.join(folder.dir, 'path')
    await mkdir(tools)
    settings = path.join(folder.dir, 'server', 'settings.json')
    await writeSettings(settings, { storage: 'memory' })
  })

  it('lowers the priority of its helper threads, not of its event loop, and moves them to SCHED_IDLE with chrt', async () => {
    // A chrt first on the PATH that notes each call, then runs the real one.
    const bin = await mkdtemp(path.join(tools, 'bin-'))
    const calls = path.join(bin, 'chrt.log')
    await recordingWrapper(bin, 'chrt', installed('chrt', 'util-linux'), calls, 'before')
    const { run } = await startBuiltServer(settings, {
      env: { PATH: `${bin}${path.delimiter}${process.env.PATH}` },
    })
    const pid = run.child.pid as number
    const threads = threadNiceness(pid)
    const main = threads.get(pid)
    expect(main).toBe(getPriority(process.pid))
    const helpers = [...threads].filter(([tid]) => tid !== pid).map(([, niceness]) => niceness)
    expect(helpers.length).toBeGreaterThan(0)
    // Lowered to HASHING_NICENESS (10), unless the whole process already ran lower.
    expect(new Set(helpers)).toEqual(new Set([Math.max(main as number, HASHING_NICENESS)]))
    // Then moved to SCHED_IDLE in the background; the event loop keeps the normal policy.
    await expect
      .poll(() => {
        const policy = threadPolicy(pid)
        return [policy.get(pid), new Set([...policy].filter(([tid]) => tid !== pid).map(([, p]) => p))]
      })
      .toEqual([0, new Set([SCHED_IDLE])])
    // Through chrt, one call a helper thread: every helper running now was named, the event loop never.
    const named = linesOf(calls).map((line) => {
      expect(line).toMatch(/^--idle --pid 0 \d+$/)
      return Number(line.split(' ').at(-1))
    })
    expect(named).not.toContain(pid)
    const running = [...threadPolicy(pid).keys()].filter((tid) => tid !== pid)
    expect(running.length).toBeGreaterThan(0)
    for (const tid of running) expect(named, `thread ${tid}`).toContain(tid)
  })

  it('keeps the lowered niceness and serves as usual where chrt is missing', async () => {
    // A PATH with a shell and nothing else: the policy cannot be changed. The shell notes when it
    // has run (so when the attempt has failed), with its exit status and arguments.
    const bare = await mkdtemp(path.join(tools, 'no-chrt-'))
    const runs = path.join(bare, 'sh.log')
    await recordingWrapper(bare, 'sh', '/bin/sh', runs, 'after')
    const { run, url } = await startBuiltServer(settings, { env: { PATH: bare } })
    const pid = run.child.pid as number
    expect((await fetch(`${url}/healthz`)).status).toBe(200)
    await waitFor(() => linesOf(runs).length > 0, 'the background shell that runs chrt to end')
    // The shell ran the loop over the helper threads and found no chrt (127: command not found).
    expect(linesOf(runs)).toEqual([
      expect.stringMatching(/^127 -c for tid do chrt --idle --pid 0 "\$tid"; done sh \d+/),
    ])
    expect(new Set(threadPolicy(pid).values())).toEqual(new Set([0]))
    const helpers = [...threadNiceness(pid)].filter(([tid]) => tid !== pid).map(([, niceness]) => niceness)
    expect(new Set(helpers)).toEqual(new Set([Math.max(getPriority(process.pid), HASHING_NICENESS)]))
  })
})
