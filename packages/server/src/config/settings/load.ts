// The one way settings come in: a file (JSON, or a module evaluated in a child process) or an
// object, validated once against the schema, refused with one line per problem that names the
// field, then completed with the defaults and the command's flags.
import { readFile, stat } from 'node:fs/promises'
import * as path from 'node:path'
import { pathToFileURL } from 'node:url'
import { messageOf } from '@flowadmin/core'
import * as v from 'valibot'
import { SettingsError } from '../../errors.js'
import { evaluateInChild } from '../child-eval.js'
import { jsonMistake } from '../json-mistake.js'
import { suggestionOf } from './fields.js'
import { type Settings, type SettingsInput, schema, settingsOf } from './schema.js'

/** Where the settings of a start come from, and the flags that override some of them. */
export interface SettingsSource {
  /** A settings file: JSON, or an ES module whose default export is the settings object. */
  settingsFile?: string | undefined
  /** The settings themselves, when there is no file; validated alike, paths relative to `cwd`. */
  settings?: SettingsInput | undefined
  /** Overrides `uiHost`. */
  host?: string | undefined
  /** Overrides `uiPort`; 0 picks a free port. */
  port?: number | undefined
  /** Overrides `userDir`; relative to `cwd`. */
  userDir?: string | undefined
}

/** The settings of a start from this source: the file or object, then the overriding flags. */
export async function resolveSettings(source: SettingsSource, cwd: string): Promise<Settings> {
  const base =
    source.settingsFile !== undefined
      ? await loadSettings(source.settingsFile, cwd)
      : parseSettings(source.settings ?? {}, 'settings', cwd)
  return {
    ...base,
    uiHost: source.host ?? base.uiHost,
    uiPort: source.port ?? base.uiPort,
    userDir: source.userDir !== undefined ? path.resolve(cwd, source.userDir) : base.userDir,
  }
}

/** `adminAuth.users[0].permissions`, from a valibot issue path (or the path up to its last key). */
function fieldOf(path: readonly { key: unknown }[]): string {
  let field = ''
  for (const item of path) {
    const key = item.key
    if (typeof key === 'number') field += `[${key}]`
    else field += field === '' ? String(key) : `.${String(key)}`
  }
  return field
}

/** One line of a refusal: the field and the issue's message, with the key suggested for it. */
function issueLine(issue: v.BaseIssue<unknown>, source: string): string {
  const path = issue.path ?? []
  const field = fieldOf(path)
  const nearest = suggestionOf(issue)
  const hint =
    nearest === undefined ? '' : `; did you mean ${fieldOf([...path.slice(0, -1), { key: nearest }])}?`
  return `${source}: ${field === '' ? '' : `${field}: `}${issue.message}${hint}`
}

/**
 * Validates a settings object. `source` names it in messages (the file as the user gave it);
 * relative paths in it resolve against `baseDir`.
 */
export function parseSettings(input: unknown, source: string, baseDir: string): Settings {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) {
    throw new SettingsError(`${source}: the settings must be an object`)
  }
  const result = v.safeParse(schema, input, { abortEarly: false })
  if (!result.success) {
    throw new SettingsError(result.issues.map((issue) => issueLine(issue, source)).join('\n'))
  }
  return settingsOf(result.output, source, baseDir)
}

/**
 * Reads and validates a settings file: JSON (`.json`), or a module (`.js`, `.mjs`, ES or CommonJS)
 * whose default export is the settings object. Without a file, the defaults with `cwd` as userDir.
 */
export async function loadSettings(file?: string, cwd = process.cwd()): Promise<Settings> {
  if (file === undefined) return parseSettings({}, 'settings', cwd)
  const absolute = path.resolve(cwd, file)
  const info = await stat(absolute).catch(() => null)
  if (info === null) throw new SettingsError(`${file}: settings file not found`)
  if (!info.isFile()) throw new SettingsError(`${file}: not a file`)

  const extension = path.extname(absolute).toLowerCase()
  let raw: unknown
  if (extension === '.js' || extension === '.mjs') {
    raw = await evaluateSettings(absolute, file)
  } else if (extension === '.json') {
    const source = await readFile(absolute, 'utf8').catch((error: unknown) => {
      throw new SettingsError(`${file}: cannot read: ${(error as NodeJS.ErrnoException).code ?? error}`)
    })
    raw = parseJson(source.replace(/^\uFEFF/, ''), file)
  } else {
    throw new SettingsError(`${file}: settings must be a .json, .js or .mjs file`)
  }
  return parseSettings(raw, file, path.dirname(absolute))
}

/**
 * The JSON of a settings file. A mistake is reported at its line and column; the text is never
 * repeated (JSON.parse's messages may quote it, and it may hold a password).
 */
function parseJson(source: string, file: string): unknown {
  try {
    return JSON.parse(source)
  } catch {
    const mistake = jsonMistake(source)
    if (mistake === null) throw new SettingsError(`${file}: not valid JSON`)
    throw new SettingsError(`${file}:${mistake.line}:${mistake.column}: not valid JSON: ${mistake.problem}`)
  }
}

/** Marks a value JSON cannot carry (a function, a symbol, a bigint) on its way out of the child. */
const NOT_DATA = '\u0000flowadmin:not-data'

/**
 * Run by a child `node` with the settings module's URL: imports it (ES module or CommonJS, as
 * Node resolves it) and sends its default export back as JSON, or why it cannot.
 */
const EVALUATE = `
const NOT_DATA = ${JSON.stringify(NOT_DATA)}
const send = (message) => process.send(message, () => process.exit(0))
const messageOf = (error) => (error instanceof Error ? error.message : String(error)) || 'unknown error'
try {
  const exported = (await import(process.argv[1])).default
  if (exported === undefined) send({ missing: true })
  else {
    const marked = (key, value) =>
      typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint'
        ? { [NOT_DATA]: typeof value }
        : value
    let json
    try {
      json = JSON.stringify(exported, marked)
    } catch (error) {
      send({ notData: messageOf(error) })
    }
    if (json !== undefined) send({ json })
  }
} catch (error) {
  send({ failed: messageOf(error) })
}
`

type Evaluated = { missing: true } | { json: string } | { notData: string } | { failed: string }

/** A stand-in for a function of the settings module: it is refused by validation as one would be. */
function notData(): void {}

/**
 * The default export of a `.js`/`.mjs` settings file, evaluated in a child `node` process and
 * handed over as JSON. Importing it here would keep every version of the module for the life of
 * the process, one more at each reload (a module is never unloaded); the child ends with its
 * module, and each load reads the file and whatever it imports afresh. What the module prints
 * goes to standard error, never into the command's output or the audit lines on stdout.
 * Functions, symbols and bigints come back as functions, which validation refuses as before.
 */
async function evaluateSettings(absolute: string, file: string): Promise<unknown> {
  const outcome = await runSettingsModule(absolute).catch((error: unknown) => {
    throw new SettingsError(`${file}: cannot load: ${messageOf(error)}`)
  })
  if ('failed' in outcome) throw new SettingsError(`${file}: cannot load: ${outcome.failed}`)
  if ('notData' in outcome) {
    const reason = /circular/i.test(outcome.notData) ? 'this object refers to itself' : outcome.notData
    throw new SettingsError(
      `${file}: cannot load: the settings must be plain data (JSON values), and ${reason}`,
    )
  }
  if ('missing' in outcome) {
    throw new SettingsError(`${file}: must export the settings object as its default export`)
  }
  return JSON.parse(outcome.json, (_key, value: unknown) =>
    typeof value === 'object' && value !== null && NOT_DATA in value ? notData : value,
  )
}

function runSettingsModule(absolute: string): Promise<Evaluated> {
  return evaluateInChild(
    ['--input-type=module', '--eval', EVALUATE, pathToFileURL(absolute).href],
    'settings',
  ) as Promise<Evaluated>
}
