// Starts the examples under their runtimes, as a user would from a shell: the binaries the
// `bun`, `deno` and `workerd` packages install, on a free port of 127.0.0.1.
import { type ChildProcess, spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
export const EXAMPLES = fileURLToPath(new URL('../', import.meta.url))
const bin = (path: string) => `${ROOT}node_modules/${path}`

export interface Runtime {
  name: 'bun' | 'deno' | 'workerd'
  /** Whether its store outlives a restart (a SQLite file), or not (memory per isolate). */
  persists: boolean
  command: string
  args: (port: number) => string[]
}

export const RUNTIMES: Runtime[] = [
  { name: 'bun', persists: true, command: bin('bun/bin/bun.exe'), args: () => ['bun/server.js'] },
  {
    name: 'deno',
    persists: true,
    command: bin('deno/deno'),
    args: () => [
      'run',
      '--allow-net',
      '--allow-env',
      '--allow-read',
      '--allow-write',
      '--allow-sys=uid,gid',
      'deno/server.js',
    ],
  },
  {
    name: 'workerd',
    persists: false,
    command: bin('workerd/bin/workerd'),
    args: (port) => ['serve', 'workerd/config.capnp', '--socket-addr', `http=127.0.0.1:${port}`],
  },
]

/** A port of 127.0.0.1 that nothing listens on right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject()))
    })
  })
}

export interface Started {
  url: string
  child: ChildProcess
  /** Everything the process printed so far. */
  output(): string
  /** SIGTERM, then SIGKILL after 5 s; resolves once it has ended. */
  stop(): Promise<void>
}

/** Starts an example and resolves once it answers GET /auth/login (within 30 s). */
export async function startExample(runtime: Runtime, env: Record<string, string>): Promise<Started> {
  const port = await freePort()
  const child = spawn(runtime.command, runtime.args(port), {
    cwd: EXAMPLES,
    env: { ...process.env, ...env, PORT: String(port), NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (output += chunk))
  const ended = new Promise<void>((resolve) => child.once('close', () => resolve()))
  const url = `http://127.0.0.1:${port}`
  const started: Started = {
    url,
    child,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
      await ended
      clearTimeout(timer)
    },
  }
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break
    try {
      if ((await fetch(`${url}/auth/login`)).ok) return started
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  await started.stop()
  throw new Error(`${runtime.name} did not answer on ${url}:\n${output}`)
}
