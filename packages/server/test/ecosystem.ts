// Shared by the ecosystem tests: a userDir with node modules as the ecosystem publishes them, a
// settings file with a real argon2 hash, and the real `node-red-admin` client run as a user would.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { hashPassword } from '../src/adapters/argon2.js'
import { type Ended, ended, killChildren, watchChild } from './child-output.js'

/** The client's entry point, from the pinned devDependency. */
export const NODE_RED_ADMIN = createRequire(import.meta.url).resolve('node-red-admin/node-red-admin.js')

export const ADMIN_PASSWORD = 'correct horse battery staple'

/** A plain module with one node set, and a scoped one with two; the flows use `lower-case`. */
export const SHOUT = { name: 'node-red-contrib-shout', version: '1.2.0' }
export const TOOLS = { name: '@acme/node-red-tools', version: '0.3.1' }
export const FLOWS = [
  { id: 'tab1', type: 'tab', label: 'Flow 1' },
  { id: 'n1', z: 'tab1', type: 'lower-case', wires: [] },
]

/** A temp folder; `remove()` deletes it. */
export async function tempDir(prefix: string) {
  const dir = await mkdtemp(path.join(tmpdir(), prefix))
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) }
}

async function writeNodeModule(
  userDir: string,
  module: { name: string; version: string },
  sets: Record<string, string[]>,
): Promise<void> {
  await writeNodeModulePackage(path.join(userDir, 'node_modules', ...module.name.split('/')), module, sets)
}

/** A node module's package folder in `dir`: one JS and one HTML file per set, declaring its types. */
export async function writeNodeModulePackage(
  dir: string,
  module: { name: string; version: string; [field: string]: unknown },
  sets: Record<string, string[]>,
): Promise<void> {
  await mkdir(dir, { recursive: true })
  const nodes = Object.fromEntries(Object.keys(sets).map((set) => [set, `${set}.js`]))
  await writeFile(
    path.join(dir, 'package.json'),
    JSON.stringify({ ...module, keywords: ['node-red'], 'node-red': { nodes } }, null, 2),
  )
  for (const [set, types] of Object.entries(sets)) {
    const register = types.map((type) => `  RED.nodes.registerType('${type}', function () {})`).join('\n')
    await writeFile(path.join(dir, `${set}.js`), `module.exports = function (RED) {\n${register}\n}\n`)
    const templates = types.map((type) => `<script type="text/html" data-template-name="${type}"></script>`)
    await writeFile(path.join(dir, `${set}.html`), `${templates.join('\n')}\n`)
  }
}

/** A userDir holding SHOUT, TOOLS and flows that use `lower-case`. */
export async function writeEcosystemUserDir(userDir: string): Promise<void> {
  await writeNodeModule(userDir, SHOUT, { shout: ['shout'] })
  await writeNodeModule(userDir, TOOLS, { upper: ['upper-case'], lower: ['lower-case', 'lower-all'] })
  await writeFile(path.join(userDir, 'flows.json'), JSON.stringify(FLOWS))
}

/** settings.json in `userDir` with one admin user (password ADMIN_PASSWORD, argon2id) and `extra`. */
export async function writeAuthSettings(
  userDir: string,
  clients: string[] | undefined,
  extra: Record<string, unknown> = {},
  auth: Record<string, unknown> = {},
): Promise<string> {
  const file = path.join(userDir, 'settings.json')
  const adminAuth = {
    type: 'credentials',
    users: [{ username: 'admin', password: await hashPassword(ADMIN_PASSWORD), permissions: '*' }],
    ...(clients === undefined ? {} : { clients }),
    ...auth,
  }
  await writeFile(file, JSON.stringify({ storage: 'memory', auditLog: 'off', ...extra, adminAuth }, null, 2))
  return file
}

/** A finished `node-red-admin` run. */
export type AdminRun = Ended

const running = new Set<ChildProcess>()

/**
 * Runs `node-red-admin <args>` with HOME in `home` (where it keeps its target and token). Each
 * prompt it prints (`Username:`, `Password:`) is answered with the next of `answers`, written only
 * once the prompt is shown: the client reads each answer with a fresh line reader, which would
 * drop lines sent ahead. Standard input closes after the last answer.
 */
export function nodeRedAdmin(home: string, args: string[], answers: string[] = []): Promise<AdminRun> {
  const env: NodeJS.ProcessEnv = { ...process.env, HOME: home, NO_COLOR: '1' }
  delete env.NR_TRACE
  const child = spawn(process.execPath, [NODE_RED_ADMIN, ...args], { env, stdio: 'pipe' })
  running.add(child)
  const run = watchChild(child, 'node-red-admin', { onClose: () => running.delete(child) })
  let answered = 0
  if (answers.length === 0) child.stdin.end()
  // After watchChild's own listener, so run.stdout already holds the chunk.
  child.stdout.on('data', () => {
    const prompts = run.stdout.match(/(Username|Password): /g)?.length ?? 0
    while (answered < prompts && answered < answers.length) {
      child.stdin.write(`${answers[answered]}\n`)
      answered++
      if (answered === answers.length) child.stdin.end()
    }
  })
  return ended(run)
}

/** Kills every client still running; for afterEach. */
export async function killClients(): Promise<void> {
  await killChildren(running)
  running.clear()
}

/** The access token the client stored at login, or null. */
export async function storedToken(home: string): Promise<string | null> {
  const config = await readFile(path.join(home, '.node-red', '.cli-config.json'), 'utf8').catch(() => null)
  if (config === null) return null
  return (JSON.parse(config) as { tokens?: { access_token?: string } }).tokens?.access_token ?? null
}

/** Output lines without the padding the client's tables leave at their ends. */
export const lines = (text: string) => text.split('\n').map((line) => line.trimEnd())
