// The rules around the organisation's directory, over a fake directory: who signs in, with which
// rights, how names and tokens follow the entry's identity, the throttle before the directory is
// asked, and what a silent directory does (and does not) stop.
import { createMemoryStores } from '@flowadmin/adapter-memory'
import {
  codeOwnerOf,
  createCore,
  type Directory,
  type DirectoryOptions,
  type DirectoryPerson,
  directoryAccountKey,
  directoryGroupKey,
  type Stores,
} from '@flowadmin/core'
import {
  createEventRecorder,
  createFakeLoader,
  createFakeTotp,
  createFakeTypeUsage,
  createFixedClock,
  createPlainHasher,
  createSeededRandom,
  holdVerifications,
} from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'

const ADDRESS = '10.0.0.1'
const BROWSER = 'the-browser-binding-of-this-test-43-characte'
const ADMINS = 'CN=NR Admins, OU=Groups, DC=example, DC=org'
const MAP = { [ADMINS]: '*', 'nr-deployers': ['flows.write', 'nodes.read'], 'NR-Viewers': 'read' }

interface Entry {
  identity: string
  password: string
  groups: string[]
  disabled?: boolean
}

/** A directory in memory: entries by name (compared as a directory compares them), switched off at will. */
function createFakeDirectory() {
  const entries = new Map<string, Entry & { username: string }>()
  let down = false
  const calls: string[] = []
  const find = (username: string) => entries.get(directoryAccountKey(username)) ?? null
  const personOf = (entry: Entry & { username: string }): DirectoryPerson => ({
    identity: entry.identity,
    username: entry.username,
    groups: entry.disabled ? [] : entry.groups,
    disabled: entry.disabled ?? false,
  })
  const directory: Directory = {
    async authenticate(username, password) {
      calls.push(`authenticate ${username}`)
      if (down) return { ok: false, error: { message: 'connect ECONNREFUSED 127.0.0.1:389' } }
      const entry = find(username)
      return { ok: true, value: entry === null || entry.password !== password ? null : personOf(entry) }
    },
    async find(username) {
      calls.push(`find ${username}`)
      if (down) return { ok: false, error: { message: 'no answer within 3000 ms' } }
      const entry = find(username)
      return { ok: true, value: entry === null ? null : personOf(entry) }
    },
  }
  return {
    directory,
    calls,
    set(username: string, entry: Entry) {
      entries.set(directoryAccountKey(username), { ...entry, username })
    },
    remove(username: string) {
      entries.delete(directoryAccountKey(username))
    },
    setDown(value: boolean) {
      down = value
    },
  }
}

function world(
  options: {
    ldap?: Partial<DirectoryOptions> | null
    stores?: Stores
    users?: Array<{ username: string; password: string; permissions: string }>
    require?: 'none' | 'everyone'
    fake?: ReturnType<typeof createFakeDirectory>
  } = {},
) {
  const clock = createFixedClock()
  const hasher = createPlainHasher()
  const events = createEventRecorder()
  const totp = createFakeTotp()
  const fake = options.fake ?? createFakeDirectory()
  const stores = options.stores ?? createMemoryStores()
  fake.set('dora', { identity: 'uuid-dora', password: 'dora-pw', groups: [ADMINS.toLowerCase()] })
  fake.set('dan', {
    identity: 'uuid-dan',
    password: 'dan-pw',
    groups: ['cn=nr-deployers,ou=groups', 'nr-deployers'],
  })
  fake.set('vic', { identity: 'uuid-vic', password: 'vic-pw', groups: ['nr-viewers'] })
  fake.set('nobody', { identity: 'uuid-nobody', password: 'nobody-pw', groups: ['marketing'] })
  fake.set('dis', { identity: 'uuid-dis', password: 'dis-pw', groups: ['nr-viewers'], disabled: true })
  fake.set('admin', { identity: 'uuid-admin', password: 'directory-admin-pw', groups: [ADMINS] })
  const measured: Array<[string, number]> = []
  const core = createCore(
    {
      stores,
      verifier: hasher,
      loader: createFakeLoader(),
      typeUsage: createFakeTypeUsage(),
      events,
      clock,
      random: createSeededRandom(5),
      totp,
      ...(options.ldap !== null && { directory: fake.directory }),
      observer: { directory: (outcome, ms) => measured.push([outcome, ms]) },
    },
    {
      adminAuth: {
        users: options.users ?? [{ username: 'admin', password: hasher.hash('pw'), permissions: '*' }],
        ...(options.ldap !== null && {
          ldap: { label: 'Example AD', permissions: { map: MAP }, ...options.ldap },
        }),
        secondFactor: { require: options.require ?? 'none' },
      },
    },
  )
  const login = (username: string, password: string, address = ADDRESS, scope = '') =>
    core.login({ grantType: 'password', clientId: 'service-admin', username, password, scope }, address)
  const tokenOf = async (username: string, password: string) => {
    const issued = await login(username, password)
    if (!issued.ok) throw new Error(issued.error.code)
    return issued.value.accessToken
  }
  const principalOf = async (token: string) => {
    const principal = await core.authenticate(token, ADDRESS)
    return principal.ok && principal.value.kind === 'user' ? principal.value : null
  }
  return { core, clock, hasher, events, fake, stores, login, tokenOf, principalOf, measured, totp }
}

describe('groups to permissions', () => {
  it('matches DNs and names without regard to case or the spaces around , = and +', () => {
    expect(directoryGroupKey('CN=NR Admins, OU=Groups , DC=example')).toBe(
      'cn=nr admins,ou=groups,dc=example',
    )
    expect(directoryGroupKey(' NR-Viewers ')).toBe('nr-viewers')
  })

  it('gives a person the union of their mapped groups, by DN or by name', async () => {
    const { tokenOf, principalOf } = world()
    expect((await principalOf(await tokenOf('dora', 'dora-pw')))?.permissions).toEqual(['*'])
    expect((await principalOf(await tokenOf('dan', 'dan-pw')))?.permissions).toEqual([
      'flows.write',
      'nodes.read',
    ])
    expect((await principalOf(await tokenOf('vic', 'vic-pw')))?.permissions).toEqual(['read'])
  })
})

describe('a directory person signs in with the password grant', () => {
  it('gets a session named by the directory, remembering the directory, as the inventory shows', async () => {
    const { core, tokenOf, principalOf, events, measured } = world()
    const token = await tokenOf('DORA ', 'dora-pw')
    const principal = await principalOf(token)
    expect(principal).toMatchObject({ username: 'dora', provider: 'Example AD', tokenKind: 'session' })
    if (principal === null) throw new Error('not signed in')
    const listed = await core.tokens.list(principal, null, null)
    if (!listed.ok) throw new Error(listed.error.code)
    expect(listed.value).toEqual([
      expect.objectContaining({ user: 'dora', provider: 'Example AD', signIn: 'password', current: true }),
    ])
    expect(events.ofType('login.succeeded').at(-1)).toMatchObject({ username: 'dora' })
    expect(measured.at(-1)?.[0]).toBe('verified')
  })

  it('refuses an unknown name, a wrong password and a disabled account alike', async () => {
    const { login, events, core, fake } = world()
    for (const [username, password] of [
      ['ghost', 'x'],
      ['vic', 'wrong'],
      ['dis', 'dis-pw'],
    ]) {
      expect(await login(username as string, password as string)).toEqual({
        ok: false,
        error: { code: 'invalid_credentials' },
      })
    }
    // One event each, alike but for the disabled account's reason (for the audit, not the caller).
    expect(events.ofType('login.failed').map(({ username, reason }) => [username, reason])).toEqual([
      ['ghost', undefined],
      ['vic', undefined],
      ['dis', 'disabled'],
    ])
    expect(events.ofType('directory.refused')).toEqual([])
    expect(fake.calls).toEqual(['authenticate ghost', 'authenticate vic', 'authenticate dis'])
    expect(core.loginScheme()).toMatchObject({ type: 'credentials' })
  })

  it('refuses a person whose groups give nothing, and says why in the audit', async () => {
    const { login, events } = world()
    expect(await login('nobody', 'nobody-pw')).toEqual({ ok: false, error: { code: 'invalid_credentials' } })
    expect(events.ofType('directory.refused').at(-1)).toMatchObject({
      reason: 'no_permissions',
      detail: expect.stringContaining('groups in the directory give no permission'),
    })
  })

  it('never asks the directory about a configured user: their password is the settings’', async () => {
    const { login, fake } = world()
    expect(await login('admin', 'directory-admin-pw')).toEqual({
      ok: false,
      error: { code: 'invalid_credentials' },
    })
    expect((await login('admin', 'pw')).ok).toBe(true)
    expect(fake.calls).toEqual([])
  })

  it('leaves the verifier to configured users and, without a directory, to unknown names too: answered once verified', async () => {
    const { login, hasher } = world({ ldap: null })
    const hold = holdVerifications(hasher)
    let answered = false
    const refused = login('ghost', 'x').then((result) => {
      answered = true
      return result
    })
    await hold.started
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setTimeout(resolve, 0))
    expect(answered).toBe(false)
    hold.release()
    expect(await refused).toEqual({ ok: false, error: { code: 'invalid_credentials' } })
    hold.restore()
    expect(hasher.verified).toEqual([hasher.dummyHash])
  })

  it('keeps a name to the identity that first signed in with it', async () => {
    const { login, fake, tokenOf, principalOf, events } = world()
    const first = await tokenOf('vic', 'vic-pw')
    // The directory gives the name to another entry (a new account, or a rename).
    fake.set('vic', { identity: 'uuid-other', password: 'other-pw', groups: [ADMINS] })
    expect(await login('vic', 'other-pw')).toEqual({ ok: false, error: { code: 'invalid_credentials' } })
    expect(events.ofType('directory.refused').at(-1)).toMatchObject({ reason: 'name_taken' })
    expect((await principalOf(first))?.permissions).toEqual(['read'])
  })

  it('narrows a person’s live tokens to their groups at the next sign-in', async () => {
    const { fake, tokenOf, principalOf } = world()
    const first = await tokenOf('dora', 'dora-pw')
    fake.set('dora', { identity: 'uuid-dora', password: 'dora-pw', groups: ['nr-viewers'] })
    await tokenOf('dora', 'dora-pw')
    expect((await principalOf(first))?.permissions).toEqual(['read'])
  })
})

describe('the throttle comes before the directory', () => {
  it('counts an account from any address, as the directory compares names, and stops asking', async () => {
    const { login, fake, events } = world()
    for (const [name, address] of [
      ['vic', '10.0.0.2'],
      ['VIC', '10.0.0.3'],
      [' vic', '10.0.0.4'],
    ]) {
      expect((await login(name as string, 'wrong', address as string)).ok).toBe(false)
    }
    const asked = fake.calls.length
    const refused = await login('vic', 'vic-pw', '10.0.0.5')
    expect(refused).toEqual({ ok: false, error: { code: 'throttled', retryAfter: 1800 } })
    expect(fake.calls.length).toBe(asked)
    expect(events.ofType('login.throttled').at(-1)).toMatchObject({ username: 'vic', address: '10.0.0.5' })
  })

  it('takes its numbers from adminAuth.ldap.throttle', async () => {
    const { login } = world({ ldap: { throttle: { maxFailures: 1, windowSeconds: 60 } } })
    expect(await login('vic', 'wrong')).toEqual({ ok: false, error: { code: 'invalid_credentials' } })
    expect(await login('vic', 'vic-pw')).toEqual({ ok: false, error: { code: 'throttled', retryAfter: 60 } })
  })
})

describe('a directory that does not answer', () => {
  it('answers directory_unavailable for its people, counts nothing, and lets configured users in', async () => {
    const { login, fake, events, measured } = world()
    fake.setDown(true)
    for (let i = 0; i < 5; i++)
      expect(await login('vic', 'vic-pw')).toEqual({
        ok: false,
        error: { code: 'directory_unavailable', retryAfter: 10 },
      })
    expect(events.ofType('directory.refused').at(-1)).toMatchObject({
      reason: 'unavailable',
      detail: 'connect ECONNREFUSED 127.0.0.1:389',
    })
    expect(measured.at(-1)?.[0]).toBe('unavailable')
    expect((await login('admin', 'pw')).ok).toBe(true)
    fake.setDown(false)
    // Nothing was counted against vic while the directory was away.
    expect((await login('vic', 'vic-pw')).ok).toBe(true)
  })
})

describe('live tokens of directory people', () => {
  it('are re-checked at most every recheckMinutes: narrowed, ended when the person goes', async () => {
    const { fake, tokenOf, principalOf, clock, events } = world()
    const token = await tokenOf('dora', 'dora-pw')
    fake.set('dora', { identity: 'uuid-dora', password: 'dora-pw', groups: ['nr-viewers'] })
    clock.advance(14 * 60_000)
    expect((await principalOf(token))?.permissions).toEqual(['*'])
    expect(fake.calls.filter((call) => call.startsWith('find'))).toEqual([])
    clock.advance(60_000)
    expect((await principalOf(token))?.permissions).toEqual(['read'])
    expect((await principalOf(token))?.permissions).toEqual(['read'])
    expect(fake.calls.filter((call) => call.startsWith('find'))).toEqual(['find dora'])
    fake.remove('dora')
    clock.advance(15 * 60_000)
    expect(await principalOf(token)).toBeNull()
    expect(events.ofType('directory.refused').at(-1)).toMatchObject({ reason: 'gone', username: 'dora' })
    expect(events.ofType('token.invalidated').at(-1)).toMatchObject({ owner: 'dora', reason: 'user_removed' })
  })

  it('follow a renamed person: their new name signs in, their tokens under the old one end at its re-check', async () => {
    const { fake, tokenOf, principalOf, clock } = world()
    const old = await tokenOf('vic', 'vic-pw')
    fake.remove('vic')
    fake.set('victoria', { identity: 'uuid-vic', password: 'vic-pw', groups: ['nr-viewers'] })
    const renamed = await tokenOf('victoria', 'vic-pw')
    clock.advance(16 * 60_000)
    expect(await principalOf(old)).toBeNull()
    expect((await principalOf(renamed))?.username).toBe('victoria')
  })

  it('end when the account is disabled, and keep their rights while the directory is silent', async () => {
    const { fake, tokenOf, principalOf, clock } = world()
    const token = await tokenOf('vic', 'vic-pw')
    fake.setDown(true)
    clock.advance(16 * 60_000)
    expect((await principalOf(token))?.permissions).toEqual(['read'])
    expect((await principalOf(token))?.permissions).toEqual(['read'])
    // Asked once, then again a minute later, not at each request.
    expect(fake.calls.filter((call) => call.startsWith('find'))).toHaveLength(1)
    fake.setDown(false)
    fake.set('vic', { identity: 'uuid-vic', password: 'vic-pw', groups: ['nr-viewers'], disabled: true })
    clock.advance(61_000)
    expect(await principalOf(token)).toBeNull()
  })

  it('are refused once the directory is no longer configured, or a configured user takes the name', async () => {
    const stores = createMemoryStores()
    const first = world({ stores })
    const token = await first.tokenOf('vic', 'vic-pw')
    const without = world({ stores, ldap: null })
    expect(await without.principalOf(token)).toBeNull()
    const other = await first.tokenOf('dan', 'dan-pw')
    const taken = world({
      stores,
      users: [{ username: 'dan', password: 'plain:pw', permissions: 'read' }],
    })
    expect(await taken.principalOf(other)).toBeNull()
    expect(taken.events.ofType('token.invalidated').at(-1)).toMatchObject({ reason: 'name_taken' })
  })

  it('outlive a reload of the settings’ users', async () => {
    const { core, tokenOf, principalOf } = world()
    const token = await tokenOf('vic', 'vic-pw')
    await core.setUsers([])
    expect((await principalOf(token))?.username).toBe('vic')
  })
})

describe('the sign-in page', () => {
  const signIn = (w: ReturnType<typeof world>, username: string, password: string) =>
    w.core.signIn.password({ username, password, clientId: 'service-editor' }, BROWSER, ADDRESS)

  it('signs a directory person in, and the code trades for a session of theirs', async () => {
    const w = world()
    const step = await signIn(w, 'dan', 'dan-pw')
    if (!step.ok || step.value.step !== 'verified') throw new Error('not verified')
    const code = await w.core.signIn.handOver(
      codeOwnerOf(step.value.person),
      { binding: BROWSER, authorization: null },
      ADDRESS,
    )
    if (!code.ok || w.core.signIn.exchange === null) throw new Error('no code')
    const traded = await w.core.signIn.exchange(BROWSER, code.value, 'service-editor', ADDRESS, null)
    if (!traded.ok) throw new Error(traded.error.code)
    expect(await w.principalOf(traded.value.accessToken)).toMatchObject({
      username: 'dan',
      provider: 'Example AD',
      permissions: ['flows.write', 'nodes.read'],
    })
  })

  it('applies the second-factor policy, and asks the directory again for the second step', async () => {
    const w = world({ require: 'everyone' })
    expect(await w.login('vic', 'vic-pw')).toEqual({ ok: false, error: { code: 'mfa_required' } })
    const step = await signIn(w, 'vic', 'vic-pw')
    if (!step.ok || step.value.step !== 'enrol') throw new Error('no enrolment')
    const enrolled = await w.core.signIn.enrol(
      BROWSER,
      step.value.ticket,
      w.totp.codeAt(step.value.enrolment.secret, w.clock.now()),
      ADDRESS,
    )
    if (enrolled.step !== 'enrolled') throw new Error(enrolled.step)
    const finished = await w.core.signIn.finishEnrolment(BROWSER, enrolled.ticket, ADDRESS)
    expect(finished).toMatchObject({
      step: 'verified',
      person: { method: 'password_totp', user: { username: 'vic' } },
    })
    expect(w.fake.calls).toEqual(['authenticate vic', 'authenticate vic', 'find vic', 'find vic'])
    // Next time, the code: a directory that went silent meanwhile ends the sign-in.
    w.clock.advance(60_000)
    const again = await signIn(w, 'vic', 'vic-pw')
    if (!again.ok || again.value.step !== 'second_factor') throw new Error('no second factor asked')
    w.fake.setDown(true)
    w.clock.advance(30_000)
    const code = w.totp.codeAt(step.value.enrolment.secret, w.clock.now())
    expect(await w.core.signIn.secondFactor(BROWSER, again.value.ticket, code, ADDRESS)).toEqual({
      step: 'expired',
    })
  })
})
