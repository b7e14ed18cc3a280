#!/bin/sh
':' //; export GLIBC_TUNABLES="glibc.malloc.mmap_threshold=131072:glibc.malloc.arena_max=2:glibc.malloc.hugetlb=1${GLIBC_TUNABLES:+:$GLIBC_TUNABLES}"; exec node --max-semi-space-size=4 "$0" "$@"
// Launcher for the built CLI: the bin exists before the first build, so package managers can link it.
//
// Run as a program, this file is first a shell script: the line above sets the process-wide
// memory tuning and replaces the shell with node running this same file, which reads that line
// as a string and a comment. (`#!/usr/bin/env -S VAR=... node` said the same in one line, but
// pnpm's shim cannot run it, and a shell line is one that every launcher can: pnpm's shim runs
// the file with sh, npm's global install links it, and node finds this file's real folder behind
// the link.) The shell is gone before node starts, so the tuning costs no process and almost no
// time. Started as `node bin/flowadmin.cjs`, the line is not run and the defaults apply.
//
// The tuning lives here, in the program's entry point, never in the packages embedders import.
// GLIBC_TUNABLES tunes glibc's allocator, which reads it only at start (an operator's own
// GLIBC_TUNABLES comes after these, and wins):
// - mmap_threshold: every block of 128 KiB or more gets its own mapping, returned to the system
//   when freed. Without it the allocator raises this threshold past the 19 MiB an argon2 hash
//   works in, the first time one is freed, and keeps every later one in its arenas: each hashing
//   thread then holds 19 MiB for the life of the process (measured: 124 MB against 48 MB after
//   verifications on two threads).
// - hugetlb: those mappings ask for transparent huge pages, so mapping 19 MiB afresh for each hash
//   takes a few page faults instead of thousands (measured: 4 % more CPU a hash instead of 50 %).
// - arena_max: two allocator arenas instead of eight per core, so the threads that come and go
//   (thread pool, V8's helpers) do not each keep memory the others cannot reuse.
// And one for V8: --max-semi-space-size=4 holds the young generation at 4 MiB a half, so a flood
// of requests does not grow it to V8's largest (peak 130 MB instead of 152 MB under
// `pnpm bench:flood`; 1 MiB would cost a tenth more CPU a request, 4 MiB costs none measurable).
'use strict'
const { existsSync, statSync, readdirSync } = require('node:fs')
const { availableParallelism } = require('node:os')
const { join } = require('node:path')

// libuv's thread pool runs password hashing (one fewer verification at once than the cores, at
// least one; 19 MiB each while it runs) and file work, among it the sync of the database's log
// after each commit. Sized to the cores plus one, a sync never waits behind the hashing of a storm
// of logins. The pool starts with its first job, and loading an ES module is one, so this launcher
// is CommonJS (loaded synchronously) and sets the size before importing the CLI. An operator's own
// UV_THREADPOOL_SIZE wins.
process.env.UV_THREADPOOL_SIZE ??= String(Math.max(2, availableParallelism()) + 1)

/**
 * The command as `pnpm build` bundles it (dist/bundle/cli.js, see scripts/bundle-cli.mjs), which
 * starts faster than its files one by one (dist/cli/main.js). The bundle is used only while it is
 * newer than the last compilation of every package, so a `tsc -b` after a change is never run
 * stale. An installed package has neither: its dist/cli.js is bundled already.
 */
function entry() {
  const files = existsSync(join(__dirname, '../dist/cli/main.js')) ? '../dist/cli/main.js' : '../dist/cli.js'
  let bundled
  try {
    bundled = statSync(join(__dirname, '../dist/bundle/cli.js')).mtimeMs
  } catch {
    return files
  }
  const packages = join(__dirname, '../..')
  for (const name of readdirSync(packages)) {
    let compiled = 0
    try {
      compiled = statSync(join(packages, name, 'tsconfig.tsbuildinfo')).mtimeMs
    } catch {
      // Not a package compiled by tsc.
    }
    if (compiled > bundled) return files
  }
  return '../dist/bundle/cli.js'
}

import(entry()).catch((error) => {
  const unbuilt = error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist')
  process.stderr.write(
    unbuilt ? 'flowadmin: not built: run `pnpm build` first\n' : `${error?.stack ?? error}\n`,
  )
  process.exitCode = 1
})
