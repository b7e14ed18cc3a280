// Starts the examples under their runtimes, as a user would from a shell: Node, and the binaries
// the `bun`, `deno` and `workerd` packages install in this folder's own node_modules (`pnpm
// install:runtimes`), on a free port of 127.0.0.1. Used by the end-to-end tests and by bench.mjs;
// typed in runtimes.d.mts.
import { spawn } from 'node:child_process'
import { createServer } from 'node:net'
import { fileURLToPath } from 'node:url'

export const EXAMPLES = fileURLToPath(new URL('./', import.meta.url))
const bin = (path) => `${EXAMPLES}node_modules/${path}`

export const RUNTIMES = [
  { name: 'node', persists: true, command: process.execPath, args: () => ['node/server.js'] },
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

/** Bundles the worker for config.capnp (workerd reads modules from its config, not node_modules). */
export async function buildWorker() {
  const built = await run(process.execPath, ['workerd/build.mjs'])
  if (built.code !== 0) throw new Error(`building the worker failed:\n${built.output}`)
}

function run(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: EXAMPLES, stdio: ['ignore', 'pipe', 'pipe'] })
    let output = ''
    child.stdout.setEncoding('utf8').on('data', (chunk) => (output += chunk))
    child.stderr.setEncoding('utf8').on('data', (chunk) => (output += chunk))
    child.once('close', (code) => resolve({ code, output }))
  })
}

/** A port of 127.0.0.1 that nothing listens on right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address()
      server.close(() => resolve(port))
    })
  })
}

/** Starts an example and resolves once it answers GET /auth/login (within 30 s). */
export async function startExample(runtime, env) {
  const port = await freePort()
  const child = spawn(runtime.command, runtime.args(port), {
    cwd: EXAMPLES,
    env: { ...process.env, ...env, PORT: String(port), NO_COLOR: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.setEncoding('utf8').on('data', (chunk) => (output += chunk))
  child.stderr.setEncoding('utf8').on('data', (chunk) => (output += chunk))
  const ended = new Promise((resolve) => child.once('close', resolve))
  const url = `http://127.0.0.1:${port}`
  const started = {
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
  while (Date.now() < deadline && child.exitCode === null) {
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

/** POST /auth/token with the password grant, as `service-admin`. */
export function login(url, { username, password }, scope = '*') {
  return fetch(`${url}/auth/token`, {
    method: 'POST',
    body: new URLSearchParams({
      client_id: 'service-admin',
      grant_type: 'password',
      scope,
      username,
      password,
    }),
  })
}
