import { instanceJson } from '@flowadmin/adapter-http'
import { actorOf, type Core, operator } from '@flowadmin/core'
import { EXIT_USAGE, StartupError } from '../errors.js'
import { INSTANCES } from './commands.js'
import { table, withCore } from './tokens.js'
import { helpOf, parseCommand, UsageError } from './usage.js'

// `flowadmin instances`: the fleet's identities from the command line, on the store directly,
// acting with every right (the operator).

const ACTIONS = ['enrol', 'list', 'revoke', 'rotate']
const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 }
/** What the command line did, for the trail: no user, no client, no address. */
const ACTOR = actorOf(operator, null)

class InstancesUsageError extends UsageError {
  constructor(message: string) {
    super(message, INSTANCES.name)
  }
}

type Values = {
  settings?: string
  'user-dir'?: string
  'resource-server'?: string
  uses?: string
  expires?: string
  instance?: string
  group?: string
  json?: boolean
}

/** `1h` → 3600; absent → undefined (the default). */
function seconds(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  const match = /^(\d{1,7})([smhd])$/.exec(value)
  if (match === null) throw new InstancesUsageError('--expires must be a duration such as 600s, 1h or 7d')
  return Number(match[1]) * (UNITS[match[2] as string] as number)
}

function whole(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  if (!/^\d{1,4}$/.test(value)) throw new InstancesUsageError('--uses must be a whole number from 1 to 1000')
  return Number(value)
}

/** The fleet's identities of the core, or a refusal when fleet mode is off. */
function fleetOf(core: Core) {
  if (core.fleet === null)
    throw new StartupError('fleet mode is off (fleet.modules): there are no instances to enrol', EXIT_USAGE)
  return core.fleet.identities
}

/** `flowadmin instances ...`. */
export async function instancesCommand(args: string[]): Promise<void> {
  const { values, positionals } = parseCommand(INSTANCES, args, true)
  if (values.help) {
    process.stdout.write(helpOf(INSTANCES))
    return
  }
  const [action, ...rest] = positionals
  if (action === undefined || !ACTIONS.includes(action))
    throw new InstancesUsageError(
      action === undefined
        ? 'instances needs an action: enrol, list, revoke or rotate'
        : `unknown instances action "${action}": the actions are enrol, list, revoke and rotate`,
    )
  if (action === 'revoke' || action === 'rotate') {
    const [id, ...extra] = rest
    if (id === undefined || extra.length > 0) throw new InstancesUsageError(`${action} takes one instance id`)
    return change(values, action, id)
  }
  if (rest.length > 0) throw new InstancesUsageError(`${action} takes no argument, not "${rest[0]}"`)
  return action === 'list' ? list(values) : enrol(values)
}

async function enrol(values: Values): Promise<void> {
  const resourceServer = values['resource-server']
  if (resourceServer === undefined)
    throw new InstancesUsageError('enrol needs --resource-server ID: the resource server its instances join')
  const request = {
    resourceServer,
    uses: whole(values.uses),
    expiresIn: seconds(values.expires),
    instance: values.instance ?? null,
    groups: values.group?.split(',').filter((group) => group !== ''),
  }
  await withCore(
    values,
    async (core) => {
      const made = await fleetOf(core).enrolments.create(operator, request, null)
      if (!made.ok) {
        const message = 'message' in made.error ? made.error.message : made.error.code
        throw new StartupError(message, EXIT_USAGE)
      }
      const { token, ...view } = made.value
      if (values.json) {
        process.stdout.write(
          `${JSON.stringify({ ...view, token, expiresAt: new Date(view.expiresAt).toISOString(), createdAt: new Date(view.createdAt).toISOString() }, null, 2)}\n`,
        )
        return
      }
      process.stdout.write(`${token}\n`)
      const uses = view.uses === 1 ? 'one instance' : `${view.uses} instances`
      const named = view.instance === null ? '' : ` as ${view.instance}`
      process.stderr.write(
        `Enrolment token ${view.id} for ${uses}${named} of ${view.resourceServer}, until ${new Date(view.expiresAt).toISOString()}.\n` +
          'Give it to the Node-RED instance helper; it is shown only now.\n',
      )
    },
    INSTANCES,
  )
}

async function list(values: Values): Promise<void> {
  await withCore(
    values,
    async (core) => {
      const instances = (await fleetOf(core).instances()).map(instanceJson)
      if (values.json) {
        process.stdout.write(`${JSON.stringify(instances, null, 2)}\n`)
        return
      }
      const rows = [['ID', 'RESOURCE SERVER', 'CONNECTED', 'ENROLLED', 'BY', 'ROTATED', 'REVOKED']]
      const day = (iso: string | null | undefined) => (iso == null ? '-' : iso.slice(0, 16).replace('T', ' '))
      for (const view of instances) {
        rows.push([
          view.id,
          view.resourceServer,
          view.connected ? 'yes' : 'no',
          view.enrolment === null ? 'shared secret' : day(view.enrolment.at),
          view.enrolment?.by ?? '-',
          day(view.enrolment?.rotatedAt),
          day(view.enrolment?.revokedAt),
        ])
      }
      process.stdout.write(`${table(rows)}\n`)
    },
    INSTANCES,
  )
}

async function change(values: Values, action: 'revoke' | 'rotate', id: string): Promise<void> {
  await withCore(
    values,
    async (core) => {
      const identities = fleetOf(core)
      const done =
        action === 'revoke'
          ? (await identities.revoke(id, ACTOR)) !== null
          : await identities.askRotate(id, ACTOR)
      if (!done)
        throw new StartupError(
          action === 'revoke' ? `no instance ${id}` : `no enrolled instance ${id} that is not revoked`,
          1,
        )
      process.stderr.write(
        action === 'revoke'
          ? `Instance ${id} is revoked: its credential is refused from now on, its editors' sessions ended.\n`
          : `Instance ${id} takes a new secret at its next poll.\n`,
      )
    },
    INSTANCES,
  )
}
