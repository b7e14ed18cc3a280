// A Node-RED settings file as its launcher loads it (required, then `settingsFile` set; `serverPort`
// once it listens), with the helper's options, its adminAuth, and optionally its audit logger.
import { mkdtempSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { AdminAuth, AuditLogger, FlowadminOptions, NodeRedLogMessage } from '../index.js'

const require = createRequire(import.meta.url)
const HELPER = fileURLToPath(new URL('../index.js', import.meta.url))

export interface SettingsModule {
  /** What the helper logged. */
  lines: string[]
  options: FlowadminOptions
  adminAuth: AdminAuth
  logging?: { flowadmin: AuditLogger }
  userDir: string
  settingsFile: string
}

export interface SettingsFileOptions {
  /** The helper's options besides url, clientId, clientSecret and log (JSON). */
  options?: Partial<FlowadminOptions>
  /** Node-RED's port; without it the file is loaded as before Node-RED listens. */
  serverPort?: number
  uiHost?: string
  /** With the audit logger, created before adminAuth (as `logging` above `adminAuth` in the file). */
  auditLogger?: boolean
  /** The userDir (default: a new temp folder), and the file's name in it. */
  userDir?: string
  fileName?: string
}

/** Writes and loads a settings file; the helper's agent (fleet mode) finds it as in Node-RED. */
export function loadSettingsModule(flowadminUrl: string, file: SettingsFileOptions = {}): SettingsModule {
  const userDir = file.userDir ?? mkdtempSync(path.join(tmpdir(), 'flowadmin-settings-'))
  const settingsFile = path.join(userDir, file.fileName ?? 'settings.js')
  const options = { url: flowadminUrl, clientId: 'fleet', clientSecret: 's3cret', ...file.options }
  writeFileSync(
    settingsFile,
    `const flowadmin = require(${JSON.stringify(HELPER)})
const options = { ...${JSON.stringify(options)}, log: (line) => module.exports.lines.push(line) }
module.exports = { lines: [], options }
${file.auditLogger ? 'module.exports.logging = { flowadmin: flowadmin.auditLogger(options) }' : ''}
module.exports.adminAuth = flowadmin.adminAuth(options)
Object.assign(module.exports, { uiHost: ${JSON.stringify(file.uiHost ?? '127.0.0.1')}, httpAdminRoot: '/', userDir: ${JSON.stringify(userDir)} })
${file.serverPort === undefined ? '' : `module.exports.serverPort = ${file.serverPort}`}
`,
  )
  const settings = require(settingsFile) as SettingsModule & { settingsFile?: string }
  // As Node-RED's launcher does right after loading it.
  settings.settingsFile = settingsFile
  return settings as SettingsModule
}

/** The audit logger's handler, as Node-RED asks a custom logger for it. */
export function auditHandlerOf(settings: SettingsModule): (msg: NodeRedLogMessage) => void {
  const logger = settings.logging?.flowadmin
  if (logger === undefined) throw new Error('no audit logger in these settings')
  return logger.handler(logger)
}

/** The fleet agent of these settings. */
export function agentOf(settings: SettingsModule): { stop(): Promise<void> } {
  const { stateOf } = require('../lib/state.js') as {
    stateOf(options: object): { fleet: { stop(): Promise<void> } | null }
  }
  const agent = stateOf(settings.options).fleet
  if (agent === null) throw new Error('no fleet agent for these settings')
  return agent
}
