// An identity provider's groups mapped to grants: a person's session carries them as words, their
// rights on each scope follow, and a later sign-in narrows their other sessions to what they hold then.
import { createMemoryStores } from '@flowadmin/adapter-memory'
import { createCoreWorld, createFakeIdentityProvider } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'

const MAP = {
  'line1-ops': [{ role: 'deployer', on: 'line-1' }],
  viewers: 'read',
}

function world() {
  const fake = createFakeIdentityProvider('https://id.example/realms/ops')
  const { core } = createCoreWorld({
    stores: createMemoryStores(),
    seed: 13,
    identityProvider: fake.provider,
    access: { groups: { 'line-1': ['press-*'] } },
    adminAuth: () => ({
      users: [],
      oidc: { label: 'Example ID', permissions: { claim: 'groups', map: MAP } },
    }),
  })
  const { sso } = core
  const { exchange } = core.signIn
  if (sso === null || exchange === null) throw new Error('sso not configured')
  const provider = sso
  const trade = exchange
  /** A whole sign-in of `subject` with these groups: the session's token. */
  async function signIn(subject: string, groups: string[]): Promise<string> {
    const started = await provider.begin('https://fa.example/auth/strategy/callback', '/', '10.0.0.1')
    if (!started.ok) throw new Error(started.error.message)
    const state = new URL(started.value.url).searchParams.get('state')
    fake.signsIn(subject, { preferred_username: 'pat', groups })
    const completed = await provider.complete(
      started.value.binding,
      started.value.carried,
      `https://fa.example/cb?code=c&state=${state}`,
      '10.0.0.1',
    )
    if (!completed.ok) throw new Error(completed.error.message)
    const issued = await trade(
      started.value.binding,
      completed.value.code,
      'service-editor',
      '10.0.0.1',
      null,
    )
    if (!issued.ok) throw new Error(issued.error.message)
    return issued.value.accessToken
  }
  const accessOf = async (token: string) => {
    const principal = await core.authenticate(token)
    if (!principal.ok || principal.value.kind !== 'user') throw new Error('not signed in')
    return core.accessOf(principal.value)
  }
  return { core, signIn, accessOf }
}

describe("an identity provider's groups mapped to grants", () => {
  it('give the person the role on the group, and nothing at flowadmin from it', async () => {
    const { signIn, accessOf } = world()
    const token = await signIn('sub-1', ['line1-ops'])
    const access = await accessOf(token)
    expect(access.grants).toEqual([{ role: 'deployer', on: 'line-1' }])
    expect(access.scopes).toEqual({
      'line-1': ['read', 'flows.write', 'inject.write', 'debug.write', 'library.write'],
    })
  })

  it("narrow the person's other sessions at a later sign-in without the group", async () => {
    const { signIn, accessOf } = world()
    const first = await signIn('sub-1', ['line1-ops', 'viewers'])
    expect((await accessOf(first)).scopes['line-1']).toContain('flows.write')
    await signIn('sub-1', ['viewers'])
    const narrowed = await accessOf(first)
    expect(narrowed.grants).toEqual([{ permissions: ['read'], on: 'everywhere' }])
    expect(narrowed.scopes).toEqual({ everywhere: ['read'], flowadmin: ['read'], 'line-1': ['read'] })
  })
})
