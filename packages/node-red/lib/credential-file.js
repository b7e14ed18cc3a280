'use strict'

const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

// This instance's own credential at flowadmin, kept in `<userDir>/.flowadmin-credential` (mode
// 0600, written whole or not at all: a temporary file, synced, then renamed over it). It names the
// machine it was enrolled on, so a copy of the userDir on another machine (a cloned VM, a container
// image with the userDir baked in) does not use it: the copy enrols as an instance of its own.

/** The file in the userDir. */
const CREDENTIAL_FILE = '.flowadmin-credential'
/** The largest credential file read; a real one is a few hundred bytes. */
const MAX_FILE_BYTES = 64 * 1024
const ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/

/** Reads a short text file, trimmed; null when absent, unreadable or empty. */
function readSmall(file) {
  try {
    const text = fs.readFileSync(file, 'utf8').trim()
    return text === '' ? null : text
  } catch {
    return null
  }
}

/**
 * What identifies this machine: the SHA-256 of the system's machine id (systemd's, or D-Bus's)
 * with the host name. Cloned VMs often keep the machine id, and a container image may carry one,
 * but their host names differ; containers without a machine id differ by host name (the container's
 * id, unless one is set). Network addresses are left out: they change at every restart of a pod.
 */
function machineOf() {
  const id = readSmall('/etc/machine-id') ?? readSmall('/var/lib/dbus/machine-id') ?? ''
  return crypto.createHash('sha256').update(`${id}\n${os.hostname()}`).digest('hex')
}

/** Whether `value` is a credential as the file keeps it. */
function isCredential(value) {
  return (
    value !== null &&
    typeof value === 'object' &&
    typeof value.url === 'string' &&
    typeof value.instance === 'string' &&
    ID.test(value.instance) &&
    typeof value.resourceServer === 'string' &&
    typeof value.clientId === 'string' &&
    value.clientId !== '' &&
    typeof value.clientSecret === 'string' &&
    value.clientSecret !== '' &&
    typeof value.machine === 'string'
  )
}

/**
 * The credential kept in `userDir`, for flowadmin at `url` on this `machine`:
 * `{credential}`; `{absent: true}`; or `{unusable: why}` (another machine's, another flowadmin's,
 * or not a credential file), said in a few words for the log.
 */
function readCredential(userDir, url, machine) {
  const file = path.join(userDir, CREDENTIAL_FILE)
  let text
  try {
    const stat = fs.statSync(file)
    if (!stat.isFile() || stat.size > MAX_FILE_BYTES) return { unusable: `${file} is not a credential file` }
    text = fs.readFileSync(file, 'utf8')
    // Readable by others (a copy made without its mode): this user's alone again.
    if ((stat.mode & 0o077) !== 0) tighten(file)
  } catch (error) {
    if (error?.code === 'ENOENT') return { absent: true }
    return { unusable: `${file} cannot be read (${error?.code ?? 'error'})` }
  }
  let value = null
  try {
    value = JSON.parse(text)
  } catch {
    // Not JSON.
  }
  if (!isCredential(value)) return { unusable: `${file} is not a credential file` }
  if (value.machine !== machine) {
    return {
      unusable: `${file} was made on another machine (a copy of a VM or of a container image with its userDir): this copy is not enrolled`,
    }
  }
  if (value.url !== url) {
    return { unusable: `${file} is for flowadmin at ${value.url}, not ${url}` }
  }
  return { credential: value }
}

/**
 * Writes `value` as JSON to `file` (mode 0600), replacing any: the whole new file or the old one,
 * never a part (a temporary file, synced, renamed over it, the folder synced). Null when written,
 * else why not (an error code).
 */
function writePrivateJson(file, value) {
  const temporary = `${file}.${crypto.randomBytes(6).toString('hex')}.tmp`
  let fd = null
  try {
    fd = fs.openSync(temporary, 'wx', 0o600)
    fs.writeFileSync(fd, `${JSON.stringify(value, null, 2)}\n`)
    fs.fsyncSync(fd)
    fs.closeSync(fd)
    fd = null
    fs.renameSync(temporary, file)
    syncFolder(path.dirname(file))
    return null
  } catch (error) {
    if (fd !== null) {
      try {
        fs.closeSync(fd)
      } catch {
        // Closed or never opened.
      }
    }
    try {
      fs.unlinkSync(temporary)
    } catch {
      // Not made.
    }
    return String(error?.code ?? 'error')
  }
}

/**
 * Writes the credential into `userDir`, replacing any: the whole new file or the old one, never a
 * part. Null when written, else why not (an error code).
 */
const writeCredential = (userDir, credential) =>
  writePrivateJson(path.join(userDir, CREDENTIAL_FILE), credential)

/** Mode 0600, where this user may set it. */
function tighten(file) {
  try {
    fs.chmodSync(file, 0o600)
  } catch {
    // Not this user's file: read as it is.
  }
}

/** The rename made durable, where the system allows a folder to be synced. */
function syncFolder(folder) {
  let fd = null
  try {
    fd = fs.openSync(folder, 'r')
    fs.fsyncSync(fd)
  } catch {
    // Not on every system (Windows).
  } finally {
    try {
      if (fd !== null) fs.closeSync(fd)
    } catch {
      // Closed anyway.
    }
  }
}

module.exports = {
  machineOf,
  readCredential,
  writeCredential,
  writePrivateJson,
  CREDENTIAL_FILE,
  isCredential,
}
