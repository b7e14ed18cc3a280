import { existsSync } from 'node:fs'
import * as path from 'node:path'
import type { ServerOptions } from '../compose/options.js'
import { openStores } from '../compose/stores.js'
import { resolveSettings } from '../config/settings/load.js'
import { EXIT_USAGE, StartupError } from '../errors.js'
import { MODULES } from './commands.js'
import { helpOf, parseCommand, UsageError } from './usage.js'

/** `flowadmin modules forget NAME`. */
export async function modulesCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseCommand(MODULES, args, true)
  if (values.help) {
    process.stdout.write(helpOf(MODULES))
    return
  }
  const [action, name, ...extra] = positionals
  if (action === undefined) throw new UsageError('modules needs an action: forget NAME', MODULES.name)
  if (action !== 'forget') {
    throw new UsageError(`unknown modules action "${action}": the action is forget NAME`, MODULES.name)
  }
  if (name === undefined || name === '' || extra.length > 0) {
    throw new UsageError('modules forget takes exactly one module name', MODULES.name)
  }
  const line = await forgetModule({ settingsFile: values.settings, userDir: values['user-dir'] }, name)
  process.stdout.write(`${line}\n`)
}

/**
 * `flowadmin modules forget NAME`: drops the stored state (the `enabled` flags) of a module, for
 * a module gone for good, from the store of the settings (SQLite in userDir, or PostgreSQL).
 * Discovery never forgets on its own. Returns the line to print.
 */
export async function forgetModule(options: ServerOptions, name: string): Promise<string> {
  const settings = await resolveSettings(options, options.cwd ?? process.cwd())
  if (settings.storage === 'memory') {
    throw new StartupError(
      'storage is "memory": no module state outlives the server, so there is nothing to forget',
      EXIT_USAGE,
    )
  }
  // Never create a SQLite database just to find it empty.
  if (settings.storage === 'sqlite' && !existsSync(path.join(settings.userDir, 'flowadmin.db'))) {
    return `no stored state for ${name} (there is no database in ${settings.userDir} yet)`
  }
  const { stores } = await openStores(settings)
  try {
    return (await stores.modules.remove(name))
      ? `forgot the stored state of ${name}: if it is installed, its node sets start enabled at the next start`
      : `no stored state for ${name}`
  } finally {
    await stores.close()
  }
}
