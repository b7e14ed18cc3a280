'use strict'

const crypto = require('node:crypto')
const fs = require('node:fs')
const path = require('node:path')
const { MAX_TOKEN_LENGTH } = require('./client')

// The logouts waiting for flowadmin, kept in the userDir so that a restart of Node-RED does not let
// their tokens in again: `<userDir>/.flowadmin-pending-logouts.json`, readable by its owner only
// (mode 0600: it holds tokens that flowadmin has not revoked yet), written whole to a temporary
// file and renamed over the old one, so it is never seen half written.

const FILE = '.flowadmin-pending-logouts.json'

/**
 * @typedef {object} Kept
 * @property {Array<[string, number | null]>} pending tokens vouched for, with their expiry (ms)
 * @property {string[]} unvouched tokens not vouched for
 */

/** The entries of a file's text that are well formed, at most `most` of each kind. */
function parse(text, most) {
  const value = JSON.parse(text)
  const isToken = (token) => typeof token === 'string' && token !== '' && token.length <= MAX_TOKEN_LENGTH
  const pending = (Array.isArray(value?.pending) ? value.pending : [])
    .filter(
      (entry) =>
        isToken(entry?.token) &&
        (entry.expiresAt === null ||
          (typeof entry.expiresAt === 'number' && Number.isFinite(entry.expiresAt))),
    )
    .slice(-most.pending)
    .map((entry) => [entry.token, entry.expiresAt])
  const unvouched = (Array.isArray(value?.unvouched) ? value.unvouched : [])
    .filter(isToken)
    .slice(-most.unvouched)
  return { pending, unvouched }
}

/**
 * The file of one userDir.
 * @param {string} userDir
 * @param {(line: string) => void} log
 */
function createLogoutFile(userDir, log) {
  const file = path.join(userDir, FILE)
  let writing = null
  /** The state to write next, when a write is under way. */
  let next = null
  let troubleTold = false

  /** Writes `kept` now (or removes the file when nothing waits); never rejects. */
  async function write(kept) {
    const temporary = `${file}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`
    try {
      if (kept.pending.length === 0 && kept.unvouched.length === 0) {
        await fs.promises.rm(file, { force: true })
      } else {
        const text = JSON.stringify({
          version: 1,
          pending: kept.pending.map(([token, expiresAt]) => ({ token, expiresAt })),
          unvouched: kept.unvouched,
        })
        const handle = await fs.promises.open(temporary, 'wx', 0o600)
        try {
          await handle.writeFile(text)
          await handle.sync()
        } finally {
          await handle.close()
        }
        await fs.promises.rename(temporary, file)
      }
      troubleTold = false
    } catch (error) {
      await fs.promises.rm(temporary, { force: true }).catch(() => {})
      if (!troubleTold) {
        troubleTold = true
        log(
          `cannot keep the logouts waiting for flowadmin in ${file} (${String(error?.code ?? error?.message ?? error).slice(0, 100)}): they are refused until Node-RED restarts only`,
        )
      }
    }
  }

  return {
    file,
    /**
     * What the file keeps, at most `most` of each kind; empty when there is none (or it is not
     * readable, said once).
     * @returns {Kept}
     */
    load(most) {
      try {
        return parse(fs.readFileSync(file, 'utf8'), most)
      } catch (error) {
        if (error?.code !== 'ENOENT') {
          log(
            `cannot read the logouts kept in ${file} (${String(error?.code ?? error?.message ?? error).slice(0, 100)}): they are not restored`,
          )
        }
        return { pending: [], unvouched: [] }
      }
    },
    /**
     * Keeps `snapshot()` in the file: resolves once a write that includes it is done (writes one
     * at a time, the latest state each). Never rejects.
     * @param {() => Kept} snapshot
     */
    save(snapshot) {
      if (writing !== null) {
        next ??= (async () => {
          await writing
          next = null
          return run()
        })()
        return next
      }
      return run()
      function run() {
        writing = write(snapshot()).finally(() => {
          writing = null
        })
        return writing
      }
    },
  }
}

module.exports = { createLogoutFile, FILE }
