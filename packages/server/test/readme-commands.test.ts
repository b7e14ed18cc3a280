// The README's commands as written, from the checkout, in a shell: `pnpm exec flowadmin …` runs
// the bin through pnpm's shim (node_modules/.bin/flowadmin).
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { VERSION } from '../src/index.js'
import { requireBuild } from './cli-process.js'
import { expectTuned, groupMembers, nodeInGroup, runProgram, stopGroups, until } from './program-process.js'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))

let dir: string
beforeAll(async () => {
  requireBuild()
  dir = await mkdtemp(path.join(tmpdir(), 'flowadmin-readme-'))
})
afterAll(async () => {
  await stopGroups()
  await rm(dir, { recursive: true, force: true })
})

/** Runs one line of the README in a shell at the repository's root. */
const shell = (line: string) => runProgram('/bin/sh', ['-c', line], { cwd: ROOT })

it('pnpm exec flowadmin --version', async () => {
  const run = shell('pnpm exec flowadmin --version')
  expect(await run.exited).toBe(0)
  expect(run.stderr).toBe('')
  expect(run.stdout).toBe(`${VERSION}\n`)
})

it('echo pw | pnpm exec flowadmin hash-pw', async () => {
  const run = shell('echo pw | pnpm exec flowadmin hash-pw')
  expect(await run.exited).toBe(0)
  expect(run.stderr).toBe('')
  expect(run.stdout).toMatch(/^\$argon2id\$v=19\$m=\d+,p=\d+,t=\d+\$\S+\n$/)
})

it('pnpm exec flowadmin hash-pw --help', async () => {
  const run = shell('pnpm exec flowadmin hash-pw --help')
  expect(await run.exited).toBe(0)
  expect(run.stderr).toBe('')
  expect(run.stdout).toMatch(/^Usage: flowadmin hash-pw\b/)
  expect(run.stdout).toContain('hash-pw reads the first line of standard input when it is piped')
})

it('pnpm exec flowadmin start --settings FILE: serves, with the tuning, until SIGTERM', async () => {
  const settings = path.join(dir, 'settings.json')
  await writeFile(settings, JSON.stringify({ uiPort: 0, auditLog: 'off' }))
  // Its own process group, as a shell runs a job: pnpm, and the server it starts.
  const run = runProgram('pnpm', ['exec', 'flowadmin', 'start', '--settings', settings], {
    cwd: ROOT,
    detached: true,
  })
  const group = run.child.pid as number
  const line = await run.line(/^flowadmin listening on /)
  const url = /listening on (http:\/\/\S+)/.exec(line)?.[1]
  expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: 'ok' })

  // The server is node running the bin, started by pnpm's shim with the tuning.
  const server = await nodeInGroup(group, /flowadmin\.cjs start --settings/)
  expectTuned(server)

  // SIGTERM to the command the user started (`kill PID`): pnpm passes it on, the server stops
  // cleanly, and nothing of the job is left.
  process.kill(group, 'SIGTERM')
  await run.exited
  await until('the job to end', () => (groupMembers(group).length === 0 ? true : undefined))
  expect(run.stderr).toContain('"msg":"stopped"')
})

it("pnpm start: the demo, and Ctrl-C ends it quietly with the server's exit code", async () => {
  const userDir = path.join(dir, 'demo')
  await mkdir(userDir)
  // Its own process group, as a shell runs a job; Ctrl-C is SIGINT to the whole group.
  const run = runProgram('pnpm', ['start', '--user-dir', userDir, '--port', '0'], {
    cwd: ROOT,
    detached: true,
  })
  const group = run.child.pid as number
  const line = await run.line(/^flowadmin listening on /)
  const url = /listening on (http:\/\/\S+)/.exec(line)?.[1]
  expect(await (await fetch(`${url}/healthz`)).json()).toEqual({ status: 'ok' })

  process.kill(-group, 'SIGINT')
  expect(await run.exited).toBe(0)
  await until('the job to end', () => (groupMembers(group).length === 0 ? true : undefined))
  // One signal reached the server (a second would have meant "exit now", with 1), and pnpm has
  // nothing to report.
  expect(run.stderr).toContain('"msg":"stopped"')
  expect(run.stderr).not.toContain('signal again')
  expect(`${run.stdout}${run.stderr}`).not.toContain('ELIFECYCLE')
})
