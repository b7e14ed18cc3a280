import { operator } from '@flowadmin/core'
import { StartupError } from '../errors.js'
import { withCore } from './tokens.js'
import {
  type CommandSpec,
  HELP_OPTION,
  helpOf,
  parseCommand,
  SETTINGS_OPTION,
  USER_DIR_OPTION,
  UsageError,
} from './usage.js'

export const MFA = {
  name: 'mfa',
  usage: ['reset USER --settings FILE'],
  summary: "Remove a person's second factor (when they lost it)",
  details: `Works on the database directly, whether the server runs or not. It reads the server's
settings file (adminAuth, the store).

  reset     Delete USER's TOTP secret, recovery codes and passkeys and end USER's sessions (API
            tokens stay); USER then signs in with the password alone and may enrol again.
            Audited as mfa.removed in the settings' audit file and the trail.`,
  options: {
    settings: SETTINGS_OPTION,
    'user-dir': USER_DIR_OPTION,
    help: HELP_OPTION,
  },
  exitCodes:
    'Exit codes: 0 removed, 1 USER has no second factor, or the database cannot be used,\n' +
    '2 usage or settings error.',
} satisfies CommandSpec

/** `flowadmin mfa reset USER`. */
export async function mfaCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseCommand(MFA, args, true)
  if (values.help) {
    process.stdout.write(helpOf(MFA))
    return
  }
  const [action, user, ...rest] = positionals
  if (action !== 'reset') {
    throw new UsageError(
      action === undefined
        ? 'mfa needs an action: reset'
        : `unknown mfa action "${action}": the action is reset`,
      MFA.name,
    )
  }
  if (user === undefined || user === '' || rest.length > 0)
    throw new UsageError('mfa reset takes exactly one username', MFA.name)
  await withCore(
    values,
    async (core) => {
      const removed = await core.mfa.remove(operator, user, null)
      if (!removed.ok || !removed.value) throw new StartupError(`${user} has no second factor`)
      process.stdout.write(`removed the second factor of ${user} and ended their sessions\n`)
    },
    MFA,
  )
}
