// The groups of instances over the API: listed, an instance put in one and taken out (`*` on
// flowadmin, audited), its rights at the instance following at once.
import { describe, expect, it } from 'vitest'
import { basicHeader, createWorld, expectChallenge, type World } from './helpers.js'
import { createResponseValidator } from './openapi-validate.js'

type Credential = { clientId: string; clientSecret: string }

const world = () =>
  createWorld({
    fleet: { answerWaitMs: 0 },
    access: { groups: { 'line-1': ['press-*'], test: [] } },
    users: [{ username: 'alice', grants: [{ role: 'deployer', on: 'test' }] }],
  })

async function enrolled(w: World, instance: string): Promise<Credential> {
  const admin = await w.login()
  const made = await w.send('POST', '/fleet/enrolments', { resourceServer: 'fleet', instance }, admin)
  const { token } = (await made.json()) as { token: string }
  return (await (await w.send('POST', '/fleet/enrol', { token })).json()) as Credential
}

/** alice's session through the instance's editor, asked about by that instance: active or not. */
async function aliceActiveAt(w: World, credential: Credential): Promise<boolean> {
  const basic = basicHeader(credential.clientId, credential.clientSecret)
  const login = await w.request('/auth/token', {
    method: 'POST',
    headers: { Authorization: basic, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      grant_type: 'password',
      scope: '',
      username: 'alice',
      password: 'pw',
    }).toString(),
  })
  const { access_token: token } = (await login.json()) as { access_token: string }
  return ((await (await w.introspect(token, basic)).json()) as { active: boolean }).active
}

const path = (group: string, instance: string) => `/fleet/groups/${group}/instances/${instance}`

describe('groups of instances over the API', () => {
  it('puts an instance in a group and takes it out, audited, the rights there following at once', async () => {
    const w = await world()
    const admin = await w.login()
    const validator = createResponseValidator(await (await w.request('/openapi.json')).json())
    const checked = async (method: string, url: string, res: Response) => {
      const result = await validator.check(method, `http://localhost${url}`, res)
      expect(result.problems, `${method} ${url}`).toEqual([])
      return result.status
    }
    const press = await enrolled(w, 'press-1')
    expect(await aliceActiveAt(w, press)).toBe(false)

    expect(
      await checked('PUT', path('test', 'press-1'), await w.put(path('test', 'press-1'), undefined, admin)),
    ).toBe(204)
    expect(await aliceActiveAt(w, press)).toBe(true)
    // Again: nothing new, nothing audited twice.
    expect((await w.put(path('test', 'press-1'), undefined, admin)).status).toBe(204)
    expect(w.events.ofType('access.group_assigned')).toMatchObject([
      { group: 'test', instance: 'press-1', username: 'admin' },
    ])
    const listed = await w.get('/fleet/groups', admin)
    expect(await checked('GET', '/fleet/groups', listed.clone())).toBe(200)
    expect(await listed.json()).toEqual([
      { name: 'line-1', patterns: ['press-*'], assigned: [] },
      {
        name: 'test',
        patterns: [],
        assigned: [{ instance: 'press-1', by: 'admin', at: expect.any(String) }],
      },
    ])

    expect(
      await checked('DELETE', path('test', 'press-1'), await w.delete(path('test', 'press-1'), admin)),
    ).toBe(204)
    expect(await aliceActiveAt(w, press)).toBe(false)
    expect(w.events.ofType('access.group_unassigned')).toMatchObject([
      { group: 'test', instance: 'press-1', username: 'admin' },
    ])
    const again = await w.delete(path('test', 'press-1'), admin)
    expect(await checked('DELETE', path('test', 'press-1'), again.clone())).toBe(404)
    expect(await again.json()).toMatchObject({ code: 'assignment_not_found' })
  })

  it('refuses a group not declared, a malformed id, and a caller without `*` on flowadmin', async () => {
    const w = await world()
    const admin = await w.login()
    const unknown = await w.put(path('line-9', 'press-1'), undefined, admin)
    expect(unknown.status).toBe(404)
    expect(await unknown.json()).toEqual({
      code: 'group_not_found',
      message: 'No group line-9: groups are declared in the settings (fleet.groups)',
    })
    const malformed = await w.put(path('test', '-x'), undefined, admin)
    expect(malformed.status).toBe(400)
    expect(await malformed.json()).toMatchObject({ code: 'invalid_request' })
    await expectChallenge(
      await w.put(path('test', 'press-1'), undefined, await w.login('reader', 'read')),
      'insufficient_scope',
    )
    expect(w.events.ofType('permission.denied')).toMatchObject([{ permission: '*', username: 'reader' }])
    await expectChallenge(await w.delete(path('test', 'press-1')))
    expect(await (await w.get('/fleet/groups', admin)).json()).toMatchObject([
      { name: 'line-1' },
      { name: 'test', assigned: [] },
    ])
  })
})
