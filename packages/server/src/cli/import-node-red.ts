import { stat } from 'node:fs/promises'
import * as path from 'node:path'
import { messageOf } from '@flowadmin/core'
import { evaluateInChild } from '../config/child-eval.js'
import { parseSettings } from '../config/settings/load.js'
import { isBcryptHash } from '../config/settings/users.js'
import { SettingsError } from '../errors.js'
import { DEFAULT_RESOURCE_SERVER_ID, IMPORT_NODE_RED } from './commands.js'
import { helpOf, parseCommand, UsageError } from './usage.js'

/** Marks a value JSON cannot carry (a function, a symbol, a bigint) on its way out of the child. */
const NOT_DATA = '\u0000flowadmin:not-data'

/**
 * Run by a child `node` with the settings.js's path: requires it, as Node-RED does, and sends back
 * its adminAuth (with `adminAuth.module` merged over it, as Node-RED merges it) as JSON, functions
 * marked, and whether it has an httpAdminMiddleware. Errors are sent by their first line only: a
 * require stack or a stack trace is no message for an operator; a syntax error gets its line.
 */
const EVALUATE = `
const NOT_DATA = ${JSON.stringify(NOT_DATA)}
const file = process.argv[1]
const send = (message) => process.send(message, () => process.exit(0))
const describe = (error) => {
  const text = (error instanceof Error ? error.message : String(error)).split('\\n')[0] ||
    (error instanceof Error ? error.name : '') || 'unknown error'
  const at = error instanceof SyntaxError && typeof error.stack === 'string' ? /^(.*):(\\d+)\\n/.exec(error.stack) : null
  return at !== null && at[1] === file ? text + ' (line ' + at[2] + ')' : text
}
const marked = (key, value) =>
  typeof value === 'function' || typeof value === 'symbol' || typeof value === 'bigint'
    ? { [NOT_DATA]: typeof value }
    : value
const outcome = () => {
  let settings
  try {
    settings = require(file)
  } catch (error) {
    return { failed: describe(error) }
  }
  try {
    const auth = settings !== null && typeof settings === 'object' ? settings.adminAuth : undefined
    if (!auth) return { missing: true }
    if (typeof auth !== 'object' || Array.isArray(auth)) return { notObject: Array.isArray(auth) ? 'a list' : typeof auth }
    const merged = Object.assign({}, auth, auth.module)
    delete merged.module
    return { adminAuth: JSON.stringify(merged, marked), middleware: settings.httpAdminMiddleware !== undefined }
  } catch (error) {
    return { notData: describe(error) }
  }
}
send(outcome())
`

type Evaluated =
  | { failed: string }
  | { missing: true }
  | { notObject: string }
  | { notData: string }
  | { adminAuth: string; middleware: boolean }

/** What a function (or symbol, or bigint) of the settings.js became: nothing JSON can hold. */
class Code {
  constructor(readonly kind: string) {}
}

const isCode = (value: unknown): value is Code => value instanceof Code

/** The settings.js's adminAuth, and whether it has an httpAdminMiddleware of its own. */
interface NodeRedAuth {
  adminAuth: Record<string, unknown>
  middleware: boolean
}

/**
 * Evaluates a Node-RED settings.js in a child `node` process, the way `.js` settings of flowadmin
 * are loaded (config/settings.ts): it is a program that may require anything, and whatever it
 * leaves running ends with its process. What it prints goes to standard error, never into the
 * JSON on standard output.
 */
async function readNodeRedAuth(file: string): Promise<NodeRedAuth> {
  const absolute = path.resolve(file)
  const info = await stat(absolute).catch(() => null)
  if (info === null) throw new SettingsError(`${file}: file not found`)
  if (!info.isFile()) throw new SettingsError(`${file}: not a file`)
  const outcome = await runSettingsJs(absolute).catch((error: unknown) => {
    throw new SettingsError(`${file}: cannot load: ${messageOf(error)}`)
  })
  if ('failed' in outcome) throw new SettingsError(`${file}: cannot load: ${outcome.failed}`)
  if ('missing' in outcome) throw new SettingsError(`${file} has no adminAuth: nothing to import`)
  if ('notObject' in outcome) {
    throw new SettingsError(`${file}: adminAuth is ${outcome.notObject}, not an object: nothing to import`)
  }
  if ('notData' in outcome) {
    const reason = /circular/i.test(outcome.notData) ? 'it refers to itself' : outcome.notData
    throw new SettingsError(`${file}: adminAuth cannot be read as data: ${reason}`)
  }
  const adminAuth = JSON.parse(outcome.adminAuth, (_key, value: unknown) =>
    typeof value === 'object' && value !== null && NOT_DATA in value
      ? new Code(String((value as Record<string, unknown>)[NOT_DATA]))
      : value,
  ) as Record<string, unknown>
  return { adminAuth, middleware: outcome.middleware }
}

function runSettingsJs(absolute: string): Promise<Evaluated> {
  return evaluateInChild(
    ['--input-type=commonjs', '--eval', EVALUATE, absolute],
    'settings',
  ) as Promise<Evaluated>
}

/** flowadmin's adminAuth made from Node-RED's, and what could not be carried over. */
interface Conversion {
  adminAuth: {
    type: 'credentials'
    users: unknown[]
    default?: unknown
    sessionExpiryTime?: unknown
  }
  /** Where each user of `adminAuth.users` is in the settings.js: `adminAuth.users[2]`. */
  userPaths: string[]
  /** Anonymous permissions, to keep on the Node-RED instances too. */
  anonymous: unknown
  warnings: string[]
}

/** Node-RED's adminAuth keys the import reads; any other is named in a warning. */
const READ_KEYS = ['type', 'users', 'default', 'sessionExpiryTime']

/** Why a function in these keys cannot be carried over, and what that leaves. */
const CODE_WARNINGS: Record<string, string> = {
  users:
    'adminAuth.users is a function (Node-RED asks it for each user by name): it cannot be converted, ' +
    'so no user is imported; list them in adminAuth.users of the flowadmin settings, with hashes from `flowadmin hash-pw`',
  authenticate:
    'adminAuth.authenticate is a function (a password check of its own): it cannot be converted and is ' +
    "left out; flowadmin checks each imported user's password against the hash in the settings",
  default:
    'adminAuth.default is a function: it cannot be converted, so no anonymous access is imported ' +
    '(adminAuth.default.permissions gives some)',
  tokens:
    'adminAuth.tokens is a function (tokens it accepts besides its own): it cannot be converted and is ' +
    'left out; flowadmin accepts only the tokens it issued (API tokens: `flowadmin tokens create`)',
}

const quoted = (value: unknown) => (typeof value === 'string' ? JSON.stringify(value) : String(value))

/** Everything Node-RED's adminAuth holds that flowadmin's settings can hold, as flowadmin has it. */
function convert(auth: Record<string, unknown>): Conversion {
  const warnings: string[] = []
  if (auth.type === 'strategy') {
    warnings.push(
      'adminAuth.type is "strategy" (a Passport login such as OAuth): it cannot be converted; ' +
        'flowadmin logs users in with passwords, so only users with a password hash are imported',
    )
  } else if (auth.type !== 'credentials') {
    warnings.push(
      `adminAuth.type is ${auth.type === undefined ? 'missing' : quoted(auth.type)}, not "credentials": ` +
        'the users are imported for password logins anyway',
    )
  }
  const { users, userPaths } = convertUsers(auth.users, warnings)
  const adminAuth: Conversion['adminAuth'] = { type: 'credentials', users }
  // Node-RED reads default and sessionExpiryTime only when truthy (a sessionExpiryTime of 0 is its
  // default, a week, which is flowadmin's too).
  let anonymous: unknown
  if (auth.default) {
    if (isCode(auth.default)) warnings.push(CODE_WARNINGS.default as string)
    else {
      const given = auth.default as Record<string, unknown>
      adminAuth.default =
        typeof given === 'object' && !Array.isArray(given) ? { permissions: given.permissions } : given
      anonymous = given.permissions
    }
  }
  if (auth.sessionExpiryTime) adminAuth.sessionExpiryTime = auth.sessionExpiryTime
  for (const [key, value] of Object.entries(auth)) {
    if (READ_KEYS.includes(key)) continue
    if (isCode(value)) {
      warnings.push(
        CODE_WARNINGS[key] ?? `adminAuth.${key} is a ${value.kind}: it cannot be converted and is left out`,
      )
    } else if (key === 'tokenHeader' || key === 'strategy') {
      warnings.push(
        `adminAuth.${key} goes with Node-RED's ${key === 'strategy' ? 'strategy login' : 'tokens function'}: left out`,
      )
    } else warnings.push(`adminAuth.${key} is not a setting flowadmin has: left out`)
  }
  return { adminAuth, userPaths, anonymous, warnings }
}

/**
 * Node-RED's users, one object or a list, as flowadmin's list: a name listed twice is the last
 * one (Node-RED keeps the last), and a user without a password hash is left out, since a password
 * login never let it in (a strategy login, or a password check of its own, did).
 */
function convertUsers(given: unknown, warnings: string[]): { users: unknown[]; userPaths: string[] } {
  if (given === undefined || given === null) return { users: [], userPaths: [] }
  if (isCode(given)) {
    warnings.push(CODE_WARNINGS.users as string)
    return { users: [], userPaths: [] }
  }
  const listed: Array<[unknown, string]> = Array.isArray(given)
    ? given.map((user, i) => [user, `adminAuth.users[${i}]`])
    : [[given, 'adminAuth.users']]
  const byName = new Map<unknown, [Record<string, unknown>, string]>()
  for (const [user, at] of listed) {
    if (typeof user !== 'object' || user === null || Array.isArray(user) || isCode(user)) {
      // Left for validation to name.
      byName.set(Symbol(), [user as Record<string, unknown>, at])
      continue
    }
    const record = user as Record<string, unknown>
    const key = typeof record.username === 'string' ? record.username : Symbol()
    if (byName.has(key)) {
      warnings.push(
        `adminAuth.users lists "${String(key)}" more than once: the last one is imported, as Node-RED uses it`,
      )
      byName.delete(key)
    }
    byName.set(key, [record, at])
  }
  const users: unknown[] = []
  const userPaths: string[] = []
  for (const [user, at] of byName.values()) {
    if (typeof user === 'object' && user !== null && !isCode(user)) {
      const name = typeof user.username === 'string' ? `user "${user.username}"` : at
      const password = user.password
      if (password === undefined) {
        warnings.push(
          `${name} has no password: left out (give it a hash from \`flowadmin hash-pw\` to log in at flowadmin)`,
        )
        continue
      }
      if (typeof password !== 'string' || !(isBcryptHash(password) || password.startsWith('$argon2'))) {
        warnings.push(
          `${name}: the password is not a bcrypt hash, so Node-RED's password login never let it in: ` +
            'left out (give it a hash from `flowadmin hash-pw` to log in at flowadmin)',
        )
        continue
      }
      users.push({ username: user.username, password, permissions: user.permissions })
    } else users.push(user)
    userPaths.push(at)
  }
  return { users, userPaths }
}

/**
 * The settings as flowadmin would load them: the same validation as `flowadmin start`. A refusal
 * names the field where it is in the settings.js (`adminAuth.users[2]` there, whatever was left
 * out before it).
 */
function validate(settings: { adminAuth: Conversion['adminAuth'] }, file: string, userPaths: string[]): void {
  try {
    parseSettings(JSON.parse(JSON.stringify(settings)), file, process.cwd())
  } catch (error) {
    if (!(error instanceof SettingsError)) throw error
    const reasons = error.message.replace(
      /adminAuth\.users\[(\d+)\]/g,
      (field, index: string) => userPaths[Number(index)] ?? field,
    )
    throw new SettingsError(`${file}: cannot be imported as it is; flowadmin's settings refuse:\n${reasons}`)
  }
}

/** The id of the Node-RED instances as a resource server of flowadmin, in the lines printed. */
const CLIENT_ID = DEFAULT_RESOURCE_SERVER_ID

/**
 * What to do next, for standard error: a secret for the instances and its digest, the resource
 * server to add to the printed settings, and each instance's settings.js lines, as the README of
 * @flowadmin/node-red gives them (with the instance's anonymous access and middleware kept).
 */
function nextSteps(file: string, anonymous: unknown, middleware: boolean): string {
  const adminAuth =
    anonymous === undefined
      ? 'flowadmin.adminAuth(options)'
      : `{ ...flowadmin.adminAuth(options), default: { permissions: ${JSON.stringify(anonymous)} } }`
  const options = [
    "  url: 'https://flowadmin.example:1880', // flowadmin's address, as the instance reaches it",
    `  clientId: '${CLIENT_ID}',`,
    '  clientSecret: process.env.FLOWADMIN_SECRET,',
    ...(middleware
      ? [`  middleware: httpAdminMiddleware, // the httpAdminMiddleware ${file} has: it runs first`]
      : []),
  ]
  const indent = (lines: string[]) => lines.map((line) => (line === '' ? '' : `     ${line}`)).join('\n')
  return `
Next, for each Node-RED instance (3.0 or later) to log in at flowadmin with @flowadmin/node-red:

1. Make a secret for the instances, and the resource server's entry with its digest for flowadmin:

${indent([`flowadmin secret --id ${CLIENT_ID}   # line 1: the secret, for the instances (keep it secret); line 2: the entry`])}

2. Add the instances to "adminAuth" in the flowadmin settings printed, with that entry:

${indent([`"resourceServers": [<the entry from flowadmin secret>]`])}

3. In each instance's userDir: npm install @flowadmin/node-red; give the instance the secret in
   the FLOWADMIN_SECRET environment variable; and in its settings.js, in place of its adminAuth:

${indent([
  "const flowadmin = require('@flowadmin/node-red')",
  '',
  'const options = {',
  ...options,
  '}',
  '',
  'module.exports = {',
  '  // ...',
  `  adminAuth: ${adminAuth},`,
  '  httpAdminMiddleware: flowadmin.httpAdminMiddleware(options),',
  '}',
])}
`
}

/** One line about what was imported, and one about the bcrypt hashes when there are some. */
function summary(file: string, adminAuth: Conversion['adminAuth']): string[] {
  const users = adminAuth.users as Array<{ username: string; password: string }>
  const lines = [
    `imported from ${file}: ${users.length === 1 ? '1 user' : `${users.length} users`} (${users.map((user) => user.username).join(', ')})`,
  ]
  if (users.some((user) => isBcryptHash(user.password))) {
    lines.push(
      'their bcrypt password hashes are kept as they are: flowadmin verifies them, and warns at each start ' +
        'until each is replaced with a hash from `flowadmin hash-pw`',
    )
  }
  return lines
}

/**
 * `flowadmin import-node-red SETTINGS_JS`: the flowadmin settings on standard output, what was
 * left out and what to do next on standard error, so `> flowadmin.json` keeps the settings alone.
 */
export async function importNodeRedCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseCommand(IMPORT_NODE_RED, args, true)
  if (values.help) {
    process.stdout.write(helpOf(IMPORT_NODE_RED))
    return
  }
  const [file, ...extra] = positionals
  if (file === undefined || file === '') {
    throw new UsageError('import-node-red needs the Node-RED settings.js to read', IMPORT_NODE_RED.name)
  }
  if (extra.length > 0) {
    throw new UsageError(
      `import-node-red reads one settings.js, not also "${extra[0]}"`,
      IMPORT_NODE_RED.name,
    )
  }
  const { adminAuth: given, middleware } = await readNodeRedAuth(file)
  const { adminAuth, userPaths, anonymous, warnings } = convert(given)
  for (const warning of warnings) process.stderr.write(`flowadmin: warning: ${warning}\n`)
  const settings = { adminAuth }
  validate(settings, file, userPaths)
  process.stdout.write(`${JSON.stringify(settings, null, 2)}\n`)
  for (const line of summary(file, adminAuth)) process.stderr.write(`flowadmin: ${line}\n`)
  process.stderr.write(nextSteps(file, anonymous, middleware))
}
