// Every child process and temp folder the bench creates is registered here and removed on exit,
// on error and on SIGINT/SIGTERM.
import { rmSync } from 'node:fs'

const children = new Set()
const folders = new Set()

/** Registers a child process so it is killed when the bench ends; returns it. */
export function track(child) {
  children.add(child)
  child.once('exit', () => children.delete(child))
  return child
}

/** Registers a temp folder so it is removed when the bench ends; returns it. */
export function trackFolder(path) {
  folders.add(path)
  return path
}

/** Removes a registered folder now. */
export function removeFolder(path) {
  folders.delete(path)
  rmSync(path, { recursive: true, force: true })
}

function cleanUp() {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
  children.clear()
  for (const path of folders) rmSync(path, { recursive: true, force: true })
  folders.clear()
}

process.on('exit', cleanUp)
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.once(signal, () => {
    process.stderr.write(`\n${signal}: stopping, killing every started process\n`)
    cleanUp()
    process.exit(130)
  })
}
