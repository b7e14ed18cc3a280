import { parseArgs } from 'node:util'
import { tokenJson } from '@flowadmin/adapter-http'
import { type Core, type DomainError, operator } from '@flowadmin/core'
import { createAuditLog } from './audit.js'
import { createServerCore, openStores, resolveSettings } from './compose.js'
import { EXIT_USAGE, StartupError } from './errors.js'
import { createLogger, logTo } from './log.js'

export const TOKENS_HELP = `Usage: flowadmin tokens <list|revoke|create> [options]

Works on the database directly, whether the server runs or not; a running server refuses a
revoked token on its next request.

  tokens list [--user U] [--json]
      Every unexpired session and API token, or those of user U.
  tokens revoke ID | --user U | --all
      End one token by its id, every token of user U, or every token.
  tokens create --user U --name N [--scope read] [--expires 30d|never]
      Create a named API token for U and print it on standard output, this once. The scope
      defaults to U's permissions; --expires takes s, m, h or d (default 90d; "never" only
      when adminAuth.apiTokens.allowNoExpiry is true).

Options of every tokens command:
  -s, --settings FILE   settings file (the same as the server's)
  -u, --user-dir DIR    folder with flowadmin.db (overrides userDir)
`

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 }

class TokensUsageError extends StartupError {
  constructor(message: string) {
    super(`${message}\nRun "flowadmin tokens --help" for usage.`, EXIT_USAGE)
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
function table(rows: string[][]): string {
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

async function withCore<T>(
  values: { settings?: string; 'user-dir'?: string },
  run: (core: Core) => Promise<T>,
) {
  const settings = await resolveSettings(
    { settingsFile: values.settings, userDir: values['user-dir'] },
    process.cwd(),
  )
  if (settings.adminAuth === null)
    throw new StartupError('adminAuth is not set: there are no tokens', EXIT_USAGE)
  if (settings.storage === 'memory') {
    throw new StartupError('storage is "memory": tokens live only inside the running server', EXIT_USAGE)
  }
  // Audit lines go where the server writes them; "stdout" becomes standard error here, so the
  // command's own output stays clean.
  const log = logTo(createLogger())
  const audit = createAuditLog(
    settings.auditLog,
    (text) => process.stderr.write(text),
    (message, fields) => log('error', message, fields),
  )
  const { stores } = await openStores(settings)
  try {
    const core = await createServerCore(settings, stores, audit, [], log)
    return await run(core)
  } finally {
    await stores.close()
    audit.close()
  }
}

/** `flowadmin tokens ...`: the session inventory and API tokens from the command line. */
export async function tokensCommand(args: string[]): Promise<void> {
  const [sub, ...rest] = args
  const { values, positionals } = parseArgs({
    args: rest,
    options: {
      settings: { type: 'string', short: 's' },
      'user-dir': { type: 'string', short: 'u' },
      user: { type: 'string' },
      name: { type: 'string' },
      scope: { type: 'string' },
      expires: { type: 'string' },
      json: { type: 'boolean' },
      all: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
    strict: true,
  })
  if (sub === undefined || sub === '--help' || sub === '-h' || values.help) {
    process.stdout.write(TOKENS_HELP)
    return
  }
  if (sub === 'list') return list(values)
  if (sub === 'revoke') return revoke(values, positionals)
  if (sub === 'create') return create(values)
  throw new TokensUsageError(`unknown tokens command "${sub}"`)
}

type Values = {
  settings?: string
  'user-dir'?: string
  user?: string
  name?: string
  scope?: string
  expires?: string
  json?: boolean
  all?: boolean
}

async function list(values: Values): Promise<void> {
  await withCore(values, async (core) => {
    const listed = await core.tokens.list(operator, values.user ?? '*', null)
    if (!listed.ok) throw refusal(listed.error)
    const tokens = listed.value.map(tokenJson).map(({ current: _current, ...rest }) => rest)
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
      'SCOPE',
      'CREATED',
      'EXPIRES',
      'LAST USED',
      'FROM',
    ]
    const rows = tokens.map((token) => [
      token.id,
      token.user,
      token.kind,
      token.name ?? '-',
      token.client_id,
      token.scope.join(' '),
      when(token.created_at),
      token.expires_at === null ? 'never' : when(token.expires_at),
      when(token.last_used_at),
      token.last_address ?? '-',
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
  const { user, name, scope } = values
  await withCore(values, async (core) => {
    const created = await core.tokens.create(
      operator,
      { user, name, scope, expiresIn, clientId: 'cli' },
      null,
    )
    if (!created.ok) throw refusal(created.error)
    const { view, token } = created.value
    const expires =
      view.expiresAt === null ? 'never expires' : `expires ${new Date(view.expiresAt).toISOString()}`
    process.stderr.write(
      `flowadmin: created API token ${view.id} "${view.name}" for ${view.user}, scope ${view.scope.join(' ')}, ${expires}; it is shown only now\n`,
    )
    process.stdout.write(`${token}\n`)
  })
}
