'use strict'

const crypto = require('node:crypto')
const fs = require('node:fs')
const os = require('node:os')
const path = require('node:path')

// Node-RED's own settings, found from inside them: the settings file's module, whose adminAuth is
// the one this helper made. The userDir (this instance's id and its waiting logouts are kept there)
// and, once Node-RED listens, its port.

/** The file in the userDir that keeps this instance's id. */
const ID_FILE = '.flowadmin-instance'
/** How often the settings are looked for until they are found. */
const LOOK_MS = 250

/**
 * Node-RED's settings object, as its launcher loaded it and completes it (`serverPort` once it
 * listens): the settings file's module, whose adminAuth is `adminAuth` (or a copy of it, as in
 * `{ ...flowadmin.adminAuth(options), default: … }`). The runtime's read-only copy of the settings
 * is another module, and lacks what is set after start. Null when not found (yet).
 */
function nodeRedSettingsOf(adminAuth) {
  for (const cached of Object.values(require.cache)) {
    const exported = cached?.exports
    if (exported === null || typeof exported !== 'object') continue
    const candidate = exported.adminAuth
    if (candidate !== adminAuth && (candidate == null || candidate.tokens !== adminAuth.tokens)) continue
    if (
      typeof exported.settingsFile === 'string' &&
      path.resolve(exported.settingsFile) === cached.filename
    ) {
      return exported
    }
  }
  return null
}

/**
 * Node-RED's userDir once it is settled: as the settings (or `--userDir`) give it, else, once
 * Node-RED listens, its default (`~/.node-red`). Null before: the launcher may still set it.
 */
function settledUserDir(settings) {
  if (typeof settings?.userDir === 'string') return settings.userDir
  return settings?.serverPort !== undefined ? path.join(os.homedir(), '.node-red') : null
}

/**
 * Looks for Node-RED's settings now, at the next turn, then every 250 ms, until `ready(settings)`
 * holds for them: then `found(settings)`, once. Stops looking after `giveUpMs` (null: never), or at
 * `cancel()`. Never throws.
 */
function watchSettings(adminAuth, ready, found, giveUpMs = null) {
  const started = Date.now()
  let timer = null
  let done = false
  const look = () => {
    timer = null
    if (done) return
    try {
      const settings = nodeRedSettingsOf(adminAuth)
      if (settings !== null && ready(settings)) {
        done = true
        found(settings)
        return
      }
    } catch {
      // Looked for again.
    }
    if (giveUpMs !== null && Date.now() - started >= giveUpMs) return
    timer = setTimeout(look, LOOK_MS)
    timer.unref?.()
  }
  const first = setImmediate(look)
  first.unref?.()
  return () => {
    done = true
    clearImmediate(first)
    if (timer !== null) clearTimeout(timer)
  }
}

/**
 * This instance's id: the option, else the one kept in `<userDir>/.flowadmin-instance` (created
 * on first start). Null when neither can be had (the folder is read-only): fleet mode then stops.
 */
function instanceIdOf(instanceId, userDir, log) {
  if (instanceId !== null) return instanceId
  const file = path.join(userDir, ID_FILE)
  try {
    const kept = fs.readFileSync(file, 'utf8').trim()
    if (/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(kept)) return kept
  } catch {
    // Not there yet.
  }
  const id = `${
    os
      .hostname()
      .replace(/[^A-Za-z0-9._-]/g, '')
      .slice(0, 40) || 'node-red'
  }-${crypto.randomBytes(6).toString('hex')}`
  try {
    fs.writeFileSync(file, `${id}\n`, { flag: 'wx' })
    return id
  } catch {
    try {
      // Another start wrote it first.
      const kept = fs.readFileSync(file, 'utf8').trim()
      if (kept !== '') return kept
    } catch {
      // Fall through.
    }
    log(`fleet: cannot keep an instance id in ${file}: set the instanceId option; fleet mode is off`)
    return null
  }
}

/**
 * The id kept in `<userDir>/.flowadmin-instance`, if any; never creates it.
 */
function keptInstanceIdOf(userDir) {
  try {
    const kept = fs.readFileSync(path.join(userDir, ID_FILE), 'utf8').trim()
    return /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(kept) ? kept : null
  } catch {
    return null
  }
}

/**
 * The version of the Node-RED this runs in, from the package of its launcher (`red.js`) or of any
 * of its modules loaded; 'unknown' when none is found.
 */
function nodeRedVersionOf() {
  const files = [require.main?.filename, ...Object.keys(require.cache)]
  const tried = new Set()
  for (const file of files) {
    if (typeof file !== 'string') continue
    const match = /^(.*[\\/]node-red)[\\/](?:red\.js$|lib[\\/])/.exec(file)
    const root = match?.[1] ?? (path.basename(file) === 'red.js' ? path.dirname(file) : null)
    if (root === null || tried.has(root)) continue
    tried.add(root)
    try {
      const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'))
      if (pkg?.name === 'node-red' && typeof pkg.version === 'string') return pkg.version.slice(0, 64)
    } catch {
      // Not Node-RED's.
    }
  }
  return 'unknown'
}

module.exports = {
  instanceIdOf,
  keptInstanceIdOf,
  nodeRedSettingsOf,
  nodeRedVersionOf,
  settledUserDir,
  watchSettings,
}
