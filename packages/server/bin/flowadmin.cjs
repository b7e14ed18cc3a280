#!/usr/bin/env node
// Launcher for the built CLI: the bin exists before the first build, so package managers can link it.
'use strict'
const { availableParallelism } = require('node:os')

// libuv's thread pool runs password hashing, 19 MiB each while it runs. Sized to the cores, it
// holds no more hashing memory than the cores can use. The pool starts with its first job, and
// loading an ES module is one, so this launcher is CommonJS (loaded synchronously) and sets the
// size before importing the CLI. An operator's own UV_THREADPOOL_SIZE wins.
process.env.UV_THREADPOOL_SIZE ??= String(Math.max(2, availableParallelism()))

import('../dist/cli.js').catch((error) => {
  const unbuilt = error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist')
  process.stderr.write(
    unbuilt ? 'flowadmin: not built: run `pnpm build` first\n' : `${error?.stack ?? error}\n`,
  )
  process.exitCode = 1
})
