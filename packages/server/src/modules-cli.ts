import { existsSync } from 'node:fs'
import * as path from 'node:path'
import { createSqliteStores } from '@flowadmin/adapter-sqlite'
import { messageOf } from '@flowadmin/core'
import { resolveSettings, type ServerOptions } from './compose.js'
import { EXIT_USAGE, StartupError } from './errors.js'

/**
 * `flowadmin modules forget NAME`: drops the stored state (the `enabled` flags) of a module, for
 * a module gone for good. Discovery never forgets on its own. Returns the line to print.
 */
export async function forgetModule(options: ServerOptions, name: string): Promise<string> {
  const settings = await resolveSettings(options, options.cwd ?? process.cwd())
  if (settings.storage === 'memory') {
    throw new StartupError(
      'storage is "memory": no module state outlives the server, so there is nothing to forget',
      EXIT_USAGE,
    )
  }
  const file = path.join(settings.userDir, 'flowadmin.db')
  // Never create a database just to find it empty.
  if (!existsSync(file))
    return `no stored state for ${name} (there is no database in ${settings.userDir} yet)`
  let stores: ReturnType<typeof createSqliteStores>
  try {
    stores = createSqliteStores(file)
  } catch (error) {
    throw new StartupError(messageOf(error), undefined, { cause: error })
  }
  try {
    return (await stores.modules.remove(name))
      ? `forgot the stored state of ${name}: if it is installed, its node sets start enabled at the next start`
      : `no stored state for ${name}`
  } finally {
    await stores.close()
  }
}
