import { type ChildProcess, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))

/**
 * The path of a child-process script. Children run the built package (`dist`), as a deployment
 * would, so the package must be built first (`pnpm build`, which CI runs before the tests).
 */
export function childScript(name: string): string {
  for (const built of ['../dist/index.js', '../../core/dist/index.js']) {
    if (!existsSync(fileURLToPath(new URL(built, import.meta.url)))) {
      throw new Error(
        `The child processes run the built packages: run \`pnpm build\` first (${built} is missing)`,
      )
    }
  }
  return fixture(name)
}

/** A running child process that speaks JSON lines. */
export interface Child {
  /** Every line it printed so far, parsed. */
  readonly lines: unknown[]
  /** Resolves with the next line it prints. */
  next(): Promise<unknown>
  /** Sends one command line and resolves with the answer line. */
  ask(command: Record<string, unknown>): Promise<unknown>
  /** Resolves once the process has ended and its output is fully read. */
  readonly ended: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>
  readonly process: ChildProcess
}

/**
 * Starts `node fixtures/<script> ...args`. `onLine` sees each line as it arrives, so a test can act
 * at an exact point of the child's output. A partial last line (a child killed mid-write) is dropped.
 */
export function startChild(script: string, args: string[], onLine?: (line: unknown) => void): Child {
  const child = spawn(process.execPath, [childScript(script), ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
  const lines: unknown[] = []
  const waiting: Array<{ resolve: (line: unknown) => void; reject: (error: Error) => void }> = []
  let stderr = ''
  let failure: Error | null = null
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  const reader = createInterface({ input: child.stdout })
  reader.on('line', (text) => {
    let line: unknown
    try {
      line = JSON.parse(text)
    } catch {
      return // a line cut short by a kill
    }
    lines.push(line)
    onLine?.(line)
    waiting.shift()?.resolve(line)
  })
  const ended = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>(
    (resolve) => {
      let exit: { code: number | null; signal: NodeJS.Signals | null } | null = null
      let closed = false
      const done = () => {
        if (exit && closed) resolve({ ...exit, stderr })
      }
      child.on('exit', (code, signal) => {
        exit = { code, signal }
        const ending = new Error(`child ${script} ended (${code ?? signal}): ${stderr}`)
        failure = ending
        for (const { reject } of waiting.splice(0)) reject(ending)
        done()
      })
      reader.on('close', () => {
        closed = true
        done()
      })
    },
  )
  const next = () =>
    new Promise<unknown>((resolve, reject) => {
      if (failure) reject(failure)
      else waiting.push({ resolve, reject })
    })
  return {
    lines,
    next,
    ask(command) {
      const answer = next()
      child.stdin.write(`${JSON.stringify(command)}\n`)
      return answer
    },
    ended,
    process: child,
  }
}
