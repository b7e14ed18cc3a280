'use strict'

const fs = require('node:fs')
const path = require('node:path')
const { writePrivateJson } = require('./credential-file')

// What the fleet agent last applied of a rollout, kept beside its credential in
// `<userDir>/.flowadmin-flows.json` (mode 0600, written whole or not at all: a temporary file,
// synced, then renamed over it), so a restart of Node-RED does not deploy the same target again.

/** The file in the userDir. */
const FLOWS_FILE = '.flowadmin-flows.json'
/** The largest file read; a real one is a few hundred bytes. */
const MAX_FILE_BYTES = 64 * 1024

const isText = (value) => typeof value === 'string' && value !== ''

/**
 * Whether `value` is what the file keeps: the rollout and variables digest applied (`outcome`
 * succeeded or failed), the rev the agent deployed (null when none), the mode of the target, and
 * the modules its flows need (absent in older files), and the outcome report flowadmin has not
 * taken yet (absent once it did).
 */
function isKept(value) {
  return (
    value !== null &&
    typeof value === 'object' &&
    isText(value.rollout) &&
    typeof value.variables === 'string' &&
    (value.outcome === 'succeeded' || value.outcome === 'failed') &&
    (value.rev === null || isText(value.rev)) &&
    (value.mode === 'report' || value.mode === 'enforce') &&
    (value.modules === undefined || (Array.isArray(value.modules) && value.modules.every(isText))) &&
    (value.unreported === undefined ||
      (typeof value.unreported === 'object' &&
        value.unreported !== null &&
        value.unreported.rollout === value.rollout &&
        value.unreported.variables === value.variables))
  )
}

/** What `userDir` keeps, or null (none, unreadable, or not such a file). */
function readKept(userDir) {
  try {
    const file = path.join(userDir, FLOWS_FILE)
    const stat = fs.statSync(file)
    if (!stat.isFile() || stat.size > MAX_FILE_BYTES) return null
    const value = JSON.parse(fs.readFileSync(file, 'utf8'))
    return isKept(value) ? value : null
  } catch {
    return null
  }
}

/** Keeps `kept` in `userDir`, replacing the file whole. Null when written, else why not (a code). */
const writeKept = (userDir, kept) => writePrivateJson(path.join(userDir, FLOWS_FILE), kept)

module.exports = { isKept, readKept, writeKept, FLOWS_FILE }
