// A core with two groups of instances (line-1: press-*, line-2: weld-*), a role with a lifetime,
// users with grants, and a fleet resource server of one audience: shared by the access tests.
import { createMemoryStores } from '@flowadmin/adapter-memory'
import { type ClientCredentials, operator } from '@flowadmin/core'
import { WORLD_ADDRESS as ADDRESS, createCoreWorld } from '@flowadmin/testkit'

export const deployer = ['debug.write', 'flows.write', 'inject.write', 'library.write', 'read']

export function world() {
  const base = createCoreWorld({
    stores: createMemoryStores(),
    seed: 11,
    fleet: {},
    access: {
      groups: { 'line-1': ['press-*'], 'line-2': ['weld-*'] },
      roles: { 'break-glass': { permissions: '*', maxTokenLifetime: 60 } },
    },
    adminAuth: (hasher) => ({
      users: [
        { username: 'admin', password: hasher.hash('pw'), permissions: '*' },
        {
          username: 'alice',
          password: hasher.hash('pw'),
          grants: [
            { role: 'deployer', on: 'line-1' },
            { role: 'viewer', on: 'everywhere' },
          ],
        },
        { username: 'carl', password: hasher.hash('pw'), grants: [{ role: 'viewer', on: 'line-2' }] },
        { username: 'olga', password: hasher.hash('pw'), grants: [{ role: 'admin', on: 'flowadmin' }] },
        {
          username: 'bea',
          password: hasher.hash('pw'),
          grants: [
            { role: 'break-glass', on: 'line-1' },
            { role: 'viewer', on: 'everywhere' },
          ],
        },
      ],
      // One audience for all its instances, so that one token is asked about by several.
      resourceServers: [
        { id: 'fleet', secret: hasher.hash('fleet-secret'), fleet: true, sharedAudience: true },
      ],
    }),
  })
  const identities = base.core.fleet?.identities
  if (identities === undefined) throw new Error('fleet mode is off')
  /** Enrols `instance` and returns its own credential. */
  const enrol = async (instance: string): Promise<ClientCredentials> => {
    const made = await identities.enrolments.create(operator, { resourceServer: 'fleet', instance }, null)
    if (!made.ok) throw new Error(made.error.code)
    const enrolled = await identities.enrolments.enrol({ token: made.value.token }, ADDRESS)
    if (!enrolled.ok) throw new Error(enrolled.error.code)
    return { id: enrolled.value.clientId, secret: enrolled.value.clientSecret }
  }
  const shared = { id: 'fleet', secret: 'fleet-secret' }
  /** A session of `username` issued through the resource server (an editor's login). */
  const editorLogin = async (username: string) => {
    const issued = await base.core.loginAsClient(
      shared,
      { grantType: 'password', username, password: 'pw', scope: '' },
      ADDRESS,
    )
    if (!issued.ok) throw new Error(issued.error.code)
    return issued.value.accessToken
  }
  const rightsAt = async (client: ClientCredentials, token: string) => {
    const answer = await base.core.introspect(client, token, ADDRESS)
    if (!answer.ok) throw new Error(answer.error.code)
    return answer.value.active ? [...answer.value.permissions].sort() : 'inactive'
  }
  return { ...base, enrol, editorLogin, rightsAt, shared }
}
