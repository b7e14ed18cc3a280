#!/usr/bin/env node
// `pnpm start`: builds what changed since the last build, then runs the demo (`flowadmin start
// --demo`, with any arguments given after `pnpm start`) and ends with its exit code.
//
// Ctrl-C reaches the server straight from the terminal (it is in the foreground process group),
// and pnpm sends this process a SIGINT of its own: it is not passed on, so the server gets one
// signal per Ctrl-C (a second one means "exit now"). package.json runs this script with `exec`, so
// no shell stands between pnpm and it: a shell killed by that SIGINT is what made pnpm report
// "ELIFECYCLE Command failed" after a clean stop. SIGTERM and SIGHUP (`kill PID`, reload) are
// passed on.
//
//   node scripts/start.mjs [flowadmin start options]
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { build } from './build.mjs'

const BIN = fileURLToPath(new URL('../packages/server/bin/flowadmin.cjs', import.meta.url))

process.on('SIGINT', () => {})
const built = build()
if (built !== 0) process.exit(built)

const server = spawn(process.execPath, [BIN, 'start', '--demo', ...process.argv.slice(2)], {
  stdio: 'inherit',
})
for (const signal of ['SIGTERM', 'SIGHUP']) {
  process.on(signal, () => server.kill(signal))
}
server.on('exit', (code, signal) => {
  if (signal === null) process.exit(code ?? 1)
  // Ended by a signal: this process ends the same way, as a shell reports it.
  process.removeAllListeners(signal)
  process.kill(process.pid, signal)
})
