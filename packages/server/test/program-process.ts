// Runs a `flowadmin` launcher the way a shell does: the file itself as a program (through its
// first line), not `node file`, with this node first on PATH; and looks at the process it became.
import { type ChildProcess, spawn } from 'node:child_process'
import { readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs'
import { delimiter, dirname } from 'node:path'
import { expect } from 'vitest'
import { type ChildRun, watchChild } from './child-output.js'

/** This process's environment with this node first on PATH, as the launchers find `node` there. */
export const programEnv = (env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  ...process.env,
  NO_COLOR: '1',
  ...env,
  PATH: `${dirname(process.execPath)}${delimiter}${env.PATH ?? process.env.PATH ?? ''}`,
})

/** A running program. */
export type ProgramRun = ChildRun

/** Every process started here, and whether it leads a process group of its own. */
const running = new Map<ChildProcess, boolean>()

/**
 * Starts `command args`; `input`, when given, is piped to stdin and closed. `detached` gives it a
 * process group of its own, as a shell gives a job: {@link stopGroups} then ends the whole group.
 */
export function runProgram(
  command: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv; input?: string; detached?: boolean } = {},
): ProgramRun {
  const child = spawn(command, args, {
    cwd: options.cwd,
    env: programEnv(options.env),
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: options.detached ?? false,
  })
  running.set(child, options.detached ?? false)
  return watchChild(child, command, {
    input: options.input,
    onClose: () => {
      if (!options.detached) running.delete(child)
    },
  })
}

/** The processes whose process group is `group`, by /proc. */
export function groupMembers(group: number): number[] {
  const members: number[] = []
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue
    try {
      // The fields after the command's name, which is in parentheses and may hold anything.
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      if (Number(fields[2]) === group && fields[0] !== 'Z') members.push(Number(name))
    } catch {
      // Gone meanwhile.
    }
  }
  return members
}

/** Polls `check` every 20 ms until it returns a value other than undefined; throws after `ms`. */
export async function until<T>(what: string, check: () => T | undefined, ms = 10_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = check()
    if (value !== undefined) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

const NODE = realpathSync(process.execPath)

/** Whether process `pid` is running this node (and no longer the shell that started it). */
function isNode(pid: number): boolean {
  try {
    return readlinkSync(`/proc/${pid}/exe`) === NODE
  } catch {
    return false
  }
}

/** What a running node process was started with: its GLIBC_TUNABLES and its argv. */
export interface Started {
  pid: number
  /** GLIBC_TUNABLES as the process got it, or undefined. */
  tunables: string | undefined
  argv: string[]
}

/**
 * GLIBC_TUNABLES in a process's environment block. glibc cuts the variable in place at each ':'
 * as it reads it, so the pieces that follow it in the block are put back together.
 */
function tunablesOf(environ: string): string | undefined {
  const entries = environ.split('\0')
  const first = entries.findIndex((entry) => entry.startsWith('GLIBC_TUNABLES='))
  if (first === -1) return undefined
  const pieces = [entries[first] as string]
  for (const entry of entries.slice(first + 1)) {
    if (!entry.startsWith('glibc.')) break
    pieces.push(entry)
  }
  return pieces.join(':').slice('GLIBC_TUNABLES='.length)
}

/**
 * What process `pid` runs node with, once its exec has made it so; undefined before. During an
 * exec the kernel names the new program (/proc/PID/exe) before it places the program's arguments
 * and environment: read then, both are empty, and the process would seem started without
 * GLIBC_TUNABLES. Every process these tests start has an environment (PATH at least) and an argv.
 */
function startedOf(pid: number): Started | undefined {
  try {
    if (!isNode(pid)) return undefined
    const environ = readFileSync(`/proc/${pid}/environ`, 'utf8')
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
    if (environ === '' || cmdline === '') return undefined
    return { pid, tunables: tunablesOf(environ), argv: cmdline.split('\0').slice(0, -1) }
  } catch {
    // Gone meanwhile.
    return undefined
  }
}

/** Waits until process `pid` runs node (a launcher execs it), then says what it was started with. */
export function nodeStarted(pid: number): Promise<Started> {
  return until(`process ${pid} to run node`, () => startedOf(pid))
}

/** The node process of process group `group` running `script` (the server under `pnpm exec`). */
export function nodeInGroup(group: number, script: RegExp): Promise<Started> {
  return until(`a node process running ${script} in group ${group}`, () =>
    groupMembers(group)
      .map(startedOf)
      .find((started) => started !== undefined && script.test(started.argv.join(' '))),
  )
}

/** The allocator's tuning the launcher sets. */
export const TUNABLES = 'glibc.malloc.mmap_threshold=131072:glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1'

/** Asserts that node was started with the allocator's and V8's tuning, as the launcher gives it. */
export function expectTuned(started: Started): void {
  expect(started.tunables).toBe(TUNABLES)
  // The node flag is one of node's own (process.execArgv), before the script.
  const flag = started.argv.indexOf('--max-semi-space-size=4')
  const script = started.argv.findIndex((arg, index) => index > 0 && !arg.startsWith('-'))
  expect(flag).toBeGreaterThan(0)
  expect(script).toBeGreaterThan(flag)
}

/** Ends every process this module started, with the whole process group of each detached one. */
export async function stopGroups(): Promise<void> {
  const groups: number[] = []
  for (const [child, detached] of running) {
    if (child.pid === undefined) continue
    if (detached) groups.push(child.pid)
    try {
      process.kill(detached ? -child.pid : child.pid, 'SIGKILL')
    } catch {
      // Gone already.
    }
  }
  running.clear()
  await until('the stopped process groups to be empty', () =>
    groups.every((group) => groupMembers(group).length === 0) ? true : undefined,
  )
}
