// The installed command runs through the bin's first line (`#!/usr/bin/env -S ...`), which sets
// the allocator's tuning for the server process: run it as a program, the way a shell does.
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { delimiter, dirname } from 'node:path'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { VERSION } from '../src/index.js'
import { BIN, killAll, requireBuild } from './cli-process.js'

beforeAll(() => requireBuild())
afterAll(() => killAll())

/** Runs the bin itself (not `node bin`), with this node first on the PATH. */
function runProgram(args: string[]) {
  const child = spawn(BIN, args, {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, PATH: `${dirname(process.execPath)}${delimiter}${process.env.PATH ?? ''}` },
  })
  let stdout = ''
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
  })
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)))
  return { child, exited, output: () => stdout }
}

it('runs as a program, through its first line', async () => {
  const run = runProgram(['--version'])
  expect(await run.exited).toBe(0)
  expect(run.output().trim()).toBe(VERSION)
})

it("gives the process the allocator's and V8's tuning", async () => {
  // hash-pw waits for its password on stdin: the process can be looked at meanwhile.
  const run = runProgram(['hash-pw'])
  await new Promise((resolve) => setTimeout(resolve, 300))
  // glibc cuts the variable at each ':' in place as it reads it, so the raw block is searched.
  const environment = readFileSync(`/proc/${run.child.pid}/environ`, 'utf8')
  expect(environment).toContain('GLIBC_TUNABLES=glibc.malloc.mmap_threshold=131072')
  expect(environment).toContain('glibc.malloc.arena_max=2')
  expect(environment).toContain('glibc.malloc.hugetlb=1')
  // And V8's young generation is kept small.
  expect(readFileSync(`/proc/${run.child.pid}/cmdline`, 'utf8').split('\0')).toContain(
    '--max-semi-space-size=4',
  )
  run.child.stdin.end('a password of some length\n')
  expect(await run.exited).toBe(0)
  expect(run.output()).toMatch(/^\$argon2id\$/)
})
