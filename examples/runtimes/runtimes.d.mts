import type { ChildProcess } from 'node:child_process'

export interface Runtime {
  name: 'node' | 'bun' | 'deno' | 'workerd'
  /** Whether its store outlives a restart (a SQLite file), or not (memory per isolate). */
  persists: boolean
  command: string
  args: (port: number) => string[]
}

export interface Started {
  url: string
  child: ChildProcess
  /** Everything the process printed so far. */
  output(): string
  /** SIGTERM, then SIGKILL after 5 s; resolves once it has ended. */
  stop(): Promise<void>
}

export const EXAMPLES: string
export const RUNTIMES: Runtime[]
export function buildWorker(): Promise<void>
export function freePort(): Promise<number>
export function startExample(runtime: Runtime, env: Record<string, string>): Promise<Started>
export function login(
  url: string,
  user: { username: string; password: string },
  scope?: string,
): Promise<Response>
