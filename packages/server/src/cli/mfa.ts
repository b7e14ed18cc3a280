import { StartupError } from '../errors.js'
import { MFA } from './commands.js'
import { withCore } from './tokens.js'
import { helpOf, parseCommand, UsageError } from './usage.js'

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
      if (!(await core.mfa.reset(user))) throw new StartupError(`${user} has no second factor`)
      process.stdout.write(`removed the second factor of ${user} and ended their sessions\n`)
    },
    MFA,
  )
}
