import { createMachineSecret, systemRandom, webDigest } from '@flowadmin/core'
import { resourceServerIdProblem } from '../config/settings/resource-servers.js'
import { DEFAULT_RESOURCE_SERVER_ID, SECRET } from './commands.js'
import { helpOf, parseCommand, UsageError } from './usage.js'

/** `flowadmin secret`: a new machine secret and the settings' entry with its digest. */
export async function secretCommand(args: string[]): Promise<void> {
  const { values } = parseCommand(SECRET, args)
  if (values.help) {
    process.stdout.write(helpOf(SECRET))
    return
  }
  const id = values.id ?? DEFAULT_RESOURCE_SERVER_ID
  const problem = resourceServerIdProblem(id)
  if (problem !== null) throw new UsageError(`--id ${problem}`, SECRET.name)
  const { secret, digest } = await createMachineSecret(systemRandom, webDigest)
  process.stdout.write(`${secret}\n${JSON.stringify({ id, secret: digest })}\n`)
}
