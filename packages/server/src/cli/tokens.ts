import { inventoryEntry } from '@flowadmin/adapter-http'
import { type Core, type DomainError, operator } from '@flowadmin/core'
import { createAuditLog } from '../adapters/audit.js'
import { fanOut } from '../adapters/fan-out.js'
import { createTrailRecorder } from '../adapters/trail-recorder.js'
import { createServerCore } from '../compose/core.js'
import { openStores } from '../compose/stores.js'
import { resolveSettings } from '../config/settings/load.js'
import { EXIT_USAGE, StartupError } from '../errors.js'
import { createLogger, logTo } from '../log.js'
import { TOKENS } from './commands.js'
import { type CommandSpec, helpOf, parseCommand, UsageError } from './usage.js'

const ACTIONS = ['list', 'revoke', 'create']

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 }

class TokensUsageError extends UsageError {
  constructor(message: string) {
    super(message, TOKENS.name)
  }
}

/** `30d` → seconds, `never` → null, absent → undefined (the default). */
export function parseExpiry(value: string | undefined): number | null | undefined {
  if (value === undefined) return undefined
  if (value === 'never') return null
  const match = /^(\d{1,10})([smhd])$/.exec(value)
  if (match === null)
    throw new TokensUsageError(`--expires must be a duration such as 3600s, 12h or 30d, or "never"`)
  return Number(match[1]) * (UNITS[match[2] as string] as number)
}

const refusal = (error: DomainError): StartupError => {
  const message = 'message' in error ? error.message : error.code
  return new StartupError(message, EXIT_USAGE)
}

const when = (iso: string | null) => (iso === null ? '-' : iso.slice(0, 16).replace('T', ' '))

/** A plain table: one line a token, columns padded to their widest cell. */
export function table(rows: string[][]): string {
  const widths = rows[0]?.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length))) ?? []
  return rows
    .map((row) =>
      row
        .map((cell, i) => cell.padEnd(widths[i] ?? 0))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}

/**
 * Runs `run` with the core of the server's settings over its database, for the command `command`
 * (`tokens` by default): its audit events go to the settings' audit file and to the trail.
 */
export async function withCore<T>(
  values: { settings?: string; 'user-dir'?: string },
  run: (core: Core) => Promise<T>,
  command: CommandSpec = TOKENS,
) {
  // Without the server's settings there are no users, so no tokens: say what is missing.
  if (values.settings === undefined) {
    throw new UsageError(
      `no settings file given: ${command.name} needs the server's settings (adminAuth and the database); add --settings FILE`,
      command.name,
    )
  }
  const settings = await resolveSettings(
    { settingsFile: values.settings, userDir: values['user-dir'] },
    process.cwd(),
  )
  if (settings.adminAuth === null)
    throw new StartupError('adminAuth is not set: there are no tokens', EXIT_USAGE)
  if (settings.storage === 'memory') {
    throw new StartupError('storage is "memory": tokens live only inside the running server', EXIT_USAGE)
  }
  // Audit events go to the audit file of the settings, as the server's do. Audit lines on stdout
  // are the running server's stream; here stdout is the command's result, and stderr is for
  // people, so with "stdout" the command writes none (its result says what it did).
  const log = logTo(createLogger())
  const audit = createAuditLog(
    settings.auditLog === 'stdout' ? 'off' : settings.auditLog,
    undefined,
    (message, fields) => log('error', message, fields),
  )
  const { stores } = await openStores(settings)
  // The trail keeps them too, as the server's: appended before the store closes.
  const trail = createTrailRecorder(stores.trail, log)
  try {
    const core = await createServerCore({ settings, stores, events: fanOut(audit, trail), log })
    return await run(core)
  } finally {
    await trail.close()
    await stores.close()
    audit.close()
  }
}

/** `flowadmin tokens ...`: the session inventory and API tokens from the command line. */
export async function tokensCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseCommand(TOKENS, args, true)
  if (values.help) {
    process.stdout.write(helpOf(TOKENS))
    return
  }
  const [action, ...rest] = positionals
  if (action === undefined) throw new TokensUsageError(`tokens needs an action: ${listed(ACTIONS, 'or')}`)
  if (!ACTIONS.includes(action)) {
    throw new TokensUsageError(`unknown tokens action "${action}": the actions are ${listed(ACTIONS, 'and')}`)
  }
  if (action === 'revoke') return revoke(values, rest)
  if (rest.length > 0) throw new TokensUsageError(`${action} takes no argument, not "${rest[0]}"`)
  return action === 'list' ? list(values) : create(values)
}

/** `a, b or c`. */
const listed = (words: readonly string[], last: 'and' | 'or') =>
  `${words.slice(0, -1).join(', ')} ${last} ${words.at(-1)}`

type Values = {
  settings?: string
  'user-dir'?: string
  user?: string
  name?: string
  scope?: string
  expires?: string
  audience?: string
  json?: boolean
  all?: boolean
}

async function list(values: Values): Promise<void> {
  await withCore(values, async (core) => {
    const listed = await core.tokens.list(operator, values.user ?? '*', null)
    if (!listed.ok) throw refusal(listed.error)
    const tokens = listed.value.map(inventoryEntry).map(({ current: _current, ...rest }) => rest)
    if (values.json) {
      process.stdout.write(`${JSON.stringify(tokens, null, 2)}\n`)
      return
    }
    const header = [
      'ID',
      'USER',
      'KIND',
      'NAME',
      'CLIENT',
      'AUDIENCE',
      'SCOPE',
      'CREATED',
      'EXPIRES',
      'LAST USED',
      'FROM',
      'SIGN-IN',
    ]
    const rows = tokens.map((token) => [
      token.id,
      token.user,
      token.kind,
      token.name ?? '-',
      token.client_id,
      token.audience,
      token.scope.join(' '),
      when(token.created_at),
      token.expires_at === null ? 'never' : when(token.expires_at),
      when(token.last_used_at),
      token.last_address ?? '-',
      token.sign_in ?? '-',
    ])
    process.stdout.write(`${rows.length === 0 ? 'no tokens' : table([header, ...rows])}\n`)
  })
}

async function revoke(values: Values, positionals: string[]): Promise<void> {
  const ways = [positionals.length > 0, values.user !== undefined, values.all === true].filter(Boolean)
  if (ways.length !== 1 || positionals.length > 1) {
    throw new TokensUsageError('revoke takes one token id, or --user U, or --all')
  }
  await withCore(values, async (core) => {
    const [id] = positionals
    if (id !== undefined) {
      const ended = await core.tokens.revoke(operator, id, null)
      if (!ended.ok) throw new StartupError(`no token with id ${id}`)
      process.stdout.write(`revoked token ${id} of ${ended.value.user}\n`)
      return
    }
    const ended = await core.tokens.revokeUser(operator, values.user ?? '*', null)
    if (!ended.ok) throw refusal(ended.error)
    const total = ended.value
    process.stdout.write(`revoked ${total} token${total === 1 ? '' : 's'}\n`)
  })
}

async function create(values: Values): Promise<void> {
  if (values.user === undefined || values.name === undefined) {
    throw new TokensUsageError('create needs --user and --name')
  }
  const expiresIn = parseExpiry(values.expires)
  const { user, name, scope, audience } = values
  await withCore(values, async (core) => {
    const created = await core.tokens.create(
      operator,
      { user, name, scope, expiresIn, audience, clientId: 'cli' },
      null,
    )
    if (!created.ok) throw refusal(created.error)
    const { view, token } = created.value
    const expires =
      view.expiresAt === null ? 'never expires' : `expires ${new Date(view.expiresAt).toISOString()}`
    process.stderr.write(
      `flowadmin: created API token ${view.id} "${view.name}" for ${view.user}, scope ${view.scope.join(' ')}, audience ${view.audience}, ${expires}; it is shown only now\n`,
    )
    process.stdout.write(`${token}\n`)
  })
}
