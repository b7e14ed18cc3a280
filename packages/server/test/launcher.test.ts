// The command run as a program: bin/flowadmin.cjs starts as a shell script (its first two lines),
// which sets the allocator's tuning and replaces itself with node running the same file. Every way
// the bin is launched must reach the server process with that tuning: the file itself, pnpm's shim
// (node_modules/.bin/flowadmin, what `pnpm exec flowadmin` runs) and a symlink to it (what npm's
// global install puts into <prefix>/bin).
import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { VERSION } from '../src/index.js'
import { BIN, requireBuild } from './cli-process.js'
import { expectTuned, nodeStarted, runProgram, stopGroups, TUNABLES } from './program-process.js'

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))
const SHIM = path.join(ROOT, 'node_modules', '.bin', 'flowadmin')

let dir: string
/** The ways a user's shell reaches the bin, by name. */
let launchers: Record<string, string>
beforeAll(async () => {
  requireBuild()
  dir = await mkdtemp(path.join(tmpdir(), 'flowadmin-launcher-'))
  const linked = path.join(dir, 'bin', 'flowadmin')
  await mkdir(path.dirname(linked))
  await symlink(BIN, linked)
  launchers = { 'the bin itself': BIN, "pnpm's shim": SHIM, 'a symlink, as npm -g links it': linked }
})
afterAll(async () => {
  await stopGroups()
  await rm(dir, { recursive: true, force: true })
})

it('runs as a program, through its first lines', async () => {
  for (const [name, launcher] of Object.entries(launchers)) {
    const run = runProgram(launcher, ['--version'])
    expect(await run.exited, name).toBe(0)
    expect(run.stderr, name).toBe('')
    expect(run.stdout, name).toBe(`${VERSION}\n`)
  }
})

it("gives the server process the allocator's and V8's tuning, through every launcher", async () => {
  for (const [name, launcher] of Object.entries(launchers)) {
    // hash-pw waits for its password on stdin: the process can be looked at meanwhile.
    const run = runProgram(launcher, ['hash-pw'])
    const started = await nodeStarted(run.child.pid as number)
    expectTuned(started)
    run.child.stdin?.end('a password of some length\n')
    expect(await run.exited, name).toBe(0)
    expect(run.stdout, name).toMatch(/^\$argon2id\$/)
  }
})

it("keeps an operator's own GLIBC_TUNABLES after the command's, so that it wins", async () => {
  const run = runProgram(BIN, ['hash-pw'], { env: { GLIBC_TUNABLES: 'glibc.malloc.arena_max=4' } })
  const { tunables } = await nodeStarted(run.child.pid as number)
  expect(tunables).toBe(`${TUNABLES}:glibc.malloc.arena_max=4`)
  run.child.stdin?.end('a password of some length\n')
  expect(await run.exited).toBe(0)
})

it('still runs as `node bin/flowadmin.cjs`, without the tuning', async () => {
  const run = runProgram(process.execPath, [BIN, '--version'])
  expect(await run.exited).toBe(0)
  expect(run.stdout).toBe(`${VERSION}\n`)
})
