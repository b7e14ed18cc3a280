#!/usr/bin/env node
// `pnpm build`: compiles every package (tsc -b), then the console's page, then the command's bundle.
// Each step skips what has not changed since the last build, so a build with nothing to do takes
// about a second; `pnpm start` and `pnpm start:fleet` run it before they start anything.
//
//   node scripts/build.mjs
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { constants } from 'node:os'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

const STEPS = [
  [createRequire(import.meta.url).resolve('typescript/bin/tsc'), '-b'],
  ['packages/console/build.mjs'],
  ['scripts/bundle-cli.mjs'],
]

/** Runs the steps in order; the exit code of the first that fails (128 + a signal's number), else 0. */
export function build() {
  for (const [script, ...args] of STEPS) {
    const step = spawnSync(process.execPath, [script, ...args], { cwd: ROOT, stdio: 'inherit' })
    if (step.signal !== null) return 128 + (constants.signals[step.signal] ?? 0)
    if (step.status !== 0) return step.status ?? 1
  }
  return 0
}

if (process.argv[1] === fileURLToPath(import.meta.url)) process.exitCode = build()
