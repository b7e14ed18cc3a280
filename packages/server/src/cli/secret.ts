import { createMachineSecret, systemRandom, webDigest } from '@flowadmin/core'
import { resourceServerIdProblem } from '../config/settings/resource-servers.js'
import { type CommandSpec, HELP_OPTION, helpOf, parseCommand, UsageError } from './usage.js'

/** The id `import-node-red`'s steps give a fleet of Node-RED instances, and this command's default. */
export const DEFAULT_RESOURCE_SERVER_ID = 'node-red'

export const SECRET = {
  name: 'secret',
  usage: ['[--id ID]'],
  summary: 'Make a resource server secret and print it with its entry for adminAuth.resourceServers',
  details: `Prints two lines on standard output, this once:

  1. the secret: 32 random bytes in base64url, for the resource server (e.g. FLOWADMIN_SECRET
     of the Node-RED instances); it is stored nowhere, so keep it there;
  2. the resource server's entry for adminAuth.resourceServers in flowadmin's settings, holding
     only the secret's SHA-256: {"id": "ID", "secret": "sha256:<64 hex digits>"}.

flowadmin compares a presented secret's SHA-256 with that digest in constant time; a right
secret is never throttled.`,
  options: {
    id: {
      value: 'ID',
      text: `the resource server's id in the entry (default ${DEFAULT_RESOURCE_SERVER_ID})`,
    },
    help: HELP_OPTION,
  },
  exitCodes: 'Exit codes: 0 success, 2 usage error (an id HTTP Basic cannot carry).',
} satisfies CommandSpec

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
