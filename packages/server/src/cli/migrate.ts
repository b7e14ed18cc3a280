// `flowadmin migrate`: the store's schema migrations, applied before the instances start.
import { migrateStore } from '../compose/stores.js'
import { MIGRATE } from './commands.js'
import { helpOf, parseCommand } from './usage.js'

/** `flowadmin migrate`: migrates the store of the settings and says to which version. */
export async function migrateCommand(args: string[]): Promise<void> {
  const { values } = parseCommand(MIGRATE, args)
  if (values.help) {
    process.stdout.write(helpOf(MIGRATE))
    return
  }
  const line = await migrateStore({ settingsFile: values.settings, userDir: values['user-dir'] })
  process.stdout.write(`flowadmin: ${line}\n`)
}
