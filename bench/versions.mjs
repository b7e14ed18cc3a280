// The versions a run measured, for the report: Node.js, the OS, flowadmin and the packages on its
// hot paths, SQLite itself, the load generator, and Node-RED when it ran beside.
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import os from 'node:os'

const packageVersion = (require, name) => {
  try {
    return require(`${name}/package.json`).version
  } catch {
    // A package whose exports hide package.json: read it beside its entry point.
    try {
      const entry = require.resolve(name)
      const at = entry.lastIndexOf(`/node_modules/${name}/`)
      return JSON.parse(readFileSync(`${entry.slice(0, at)}/node_modules/${name}/package.json`, 'utf8'))
        .version
    } catch {
      return null
    }
  }
}

function osName() {
  try {
    return readFileSync('/etc/os-release', 'utf8').match(/^PRETTY_NAME="?([^"\n]+)"?$/m)?.[1] ?? os.type()
  } catch {
    return os.type()
  }
}

export function versions({ serverRoot, nodeRed }) {
  const server = createRequire(new URL('packages/server/package.json', serverRoot))
  const sqlite = createRequire(new URL('packages/adapter-sqlite/package.json', serverRoot))
  const bench = createRequire(import.meta.url)
  const Database = sqlite('better-sqlite3')
  const db = new Database(':memory:')
  const sqliteVersion = db.prepare('SELECT sqlite_version() AS v').get().v
  db.close()
  return {
    node: process.version,
    os: `${osName()} (Linux ${os.release()})`,
    flowadmin: server('./package.json').version,
    hono: packageVersion(server, 'hono'),
    '@hono/node-server': packageVersion(server, '@hono/node-server'),
    argon2: packageVersion(server, 'argon2'),
    'better-sqlite3': packageVersion(sqlite, 'better-sqlite3'),
    sqlite: sqliteVersion,
    autocannon: packageVersion(bench, 'autocannon'),
    'node-red': nodeRed,
  }
}
