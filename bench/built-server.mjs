// The built server as a child process, for scripts that measure it: a fresh user folder with the
// given settings, the CLI on a free port, and a stop that leaves nothing behind.
import { spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'

const BIN = fileURLToPath(new URL('../packages/server/bin/flowadmin.cjs', import.meta.url))

/**
 * Starts `flowadmin start` (the bin as a program, as `flowadmin` is run) with `settings` (an object, written as settings.json into a new temp
 * folder named after `name`) on a free port; resolves once it listens, with its URL, the child
 * process and `stop()`, which ends it (SIGTERM) and removes the folder. The server's stderr is
 * this process's.
 */
export async function startBuiltServer(name, settings) {
  const userDir = await mkdtemp(path.join(tmpdir(), `flowadmin-${name}-`))
  const settingsFile = path.join(userDir, 'settings.json')
  await writeFile(settingsFile, JSON.stringify(settings))
  // The program as users run it: the bin itself, through its first line (the process tuning),
  // with this node first on PATH.
  const child = spawn(BIN, ['start', '--settings', settingsFile, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: {
      ...process.env,
      PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
    },
  })
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve))
      child.kill('SIGTERM')
      await exited
    }
    await rm(userDir, { recursive: true, force: true })
  }
  try {
    const url = await new Promise((resolve, reject) => {
      let out = ''
      child.stdout.setEncoding('utf8').on('data', (chunk) => {
        out += chunk
        const found = /listening on (http:\/\/\S+)/.exec(out)
        if (found) resolve(found[1])
      })
      child.once('exit', (code) => reject(new Error(`the server exited (${code}); run pnpm build first?`)))
    })
    return { url, child, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

/** The value at quantile `q` (0 to 1) of sorted values: the one at index ⌊q·n⌋, the last for q = 1. */
export const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]
