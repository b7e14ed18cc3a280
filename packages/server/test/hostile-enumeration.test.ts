// No enumeration: every credential failure at the token endpoint looks the same on the wire, and
// an unknown user costs one argon2 verification like a known one (counted, not timed); beside
// bcrypt users from Node-RED, every failure costs one verification of each cost of hash in use.
import { createRequire } from 'node:module'
import { describe, expect, it } from 'vitest'
import {
  ADMIN_PASSWORD,
  type LoginFields,
  login,
  type RawResponse,
  useWorkspace,
  VIEWER_PASSWORD,
} from './hostile-http.js'

const workspace = useWorkspace()

/** Status, every header but Date (names and values as sent, in order) and the body. */
const wire = (res: RawResponse) => ({
  status: res.status,
  headers: res.rawHeaders
    .flatMap((item, i) => (i % 2 === 0 ? [`${item}: ${res.rawHeaders[i + 1]}`] : []))
    .filter((line) => !/^date:/i.test(line)),
  body: res.body,
})

const failures: Array<[string, LoginFields]> = [
  ['an unknown user', { username: 'ghost', password: 'whatever' }],
  ['a wrong password', { username: 'admin', password: 'not-the-password' }],
  [
    'an unknown client (right password)',
    { username: 'admin', password: ADMIN_PASSWORD, client_id: 'intruder' },
  ],
  ['no client (right password)', { username: 'admin', password: ADMIN_PASSWORD, client_id: undefined }],
  ['a scope beyond the user (right password)', { username: 'viewer', password: VIEWER_PASSWORD, scope: '*' }],
]

describe('no enumeration at POST /auth/token', () => {
  it('answers every credential failure byte for byte alike, form or JSON, each after one verification', async () => {
    const { url } = await workspace.start({ countVerifications: true })
    const seen: Array<{ what: string; wire: ReturnType<typeof wire> }> = []
    // One address per round keeps the three admin failures of a round under the throttle.
    for (const [as, from] of [
      ['form', '127.0.0.8'],
      ['json', '127.0.0.9'],
    ] as const) {
      for (const [what, fields] of failures) {
        seen.push({ what: `${what} (${as})`, wire: wire(await login(url, fields, from, as)) })
      }
    }

    const [first] = seen
    expect(first?.wire).toEqual({
      status: 401,
      headers: [
        'cache-control: no-store',
        'content-length: 0',
        'pragma: no-cache',
        'x-content-type-options: nosniff',
        'Connection: close',
      ],
      body: '',
    })
    for (const { what, wire: other } of seen) expect({ what, ...other }).toEqual({ what, ...first?.wire })

    // One verification per attempt; the unknown user's is against a hash that is no user's, with
    // the same argon2id parameters as the users' hashes.
    const { admin, viewer } = workspace.hashes
    const verified = await workspace.verifications()
    const dummy = verified[0] as string
    expect(dummy).not.toBe(admin)
    expect(dummy).not.toBe(viewer)
    expect(dummy.split('$').slice(0, 4)).toEqual(admin.split('$').slice(0, 4))
    expect(dummy.split('$').slice(0, 4)).toEqual(['', 'argon2id', 'v=19', 'm=19456,p=1,t=2'])
    const perRound = [dummy, admin, admin, admin, viewer]
    expect(verified).toEqual([...perRound, ...perRound])

    // The audit log tells them apart only by the username given.
    const lines = await workspace.audit()
    expect(lines.map((line) => `${line.event} ${line.user} ${line.address}`)).toEqual([
      ...failures.map(([, fields]) => `login.failed ${fields.username} 127.0.0.8`),
      ...failures.map(([, fields]) => `login.failed ${fields.username} 127.0.0.9`),
    ])
  })

  it('verifies each unknown user once, however many there are', async () => {
    const { url } = await workspace.start({ countVerifications: true })
    for (let i = 0; i < 4; i++) {
      expect((await login(url, { username: `nobody-${i}`, password: 'pw' }, '127.0.0.10')).status).toBe(401)
    }
    const verified = await workspace.verifications()
    expect(verified).toHaveLength(4)
    expect(new Set(verified).size).toBe(1)
    expect(verified[0]).toMatch(/^\$argon2id\$v=19\$m=19456,p=1,t=2\$/)
  })
})

/** bcryptjs as Node-RED's editor API loads it: what `node-red admin hash-pw` hashes with. */
function nodeRedBcrypt(): { hashSync(password: string, rounds: number): string } {
  const fromNodeRed = createRequire(createRequire(import.meta.url).resolve('node-red/package.json'))
  return createRequire(fromNodeRed.resolve('@node-red/editor-api/package.json'))('bcryptjs')
}

/** What a verified hash costs: `argon2id m=19456,p=1,t=2` or `bcrypt 08`. */
const costOf = (hash: string) =>
  hash.startsWith('$2') ? `bcrypt ${hash.slice(4, 6)}` : hash.split('$').slice(1, 4).join(' ')

describe('no enumeration beside bcrypt users from Node-RED', () => {
  const EDITOR_PASSWORD = 'editor-from-node-red'
  const ARGON2 = 'argon2id v=19 m=19456,p=1,t=2'

  it('makes a wrong password of an argon2 or a bcrypt user and an unknown user each cost one verification of each kind', async () => {
    const editor = nodeRedBcrypt().hashSync(EDITOR_PASSWORD, 8)
    const { admin } = workspace.hashes
    await workspace.writeSettings({
      adminAuth: {
        users: [
          { username: 'admin', password: admin, permissions: '*' },
          { username: 'editor', password: editor, permissions: 'read' },
        ],
      },
    })
    const { url } = await workspace.start({ countVerifications: true })
    const attempts = [
      { username: 'ghost', password: 'whatever' },
      { username: 'editor', password: 'not-the-password' },
      { username: 'admin', password: 'not-the-password' },
      { username: 'nobody', password: EDITOR_PASSWORD },
    ]
    for (const fields of attempts) expect((await login(url, fields, '127.0.0.11')).status).toBe(401)
    // The right password still works, at the same cost.
    expect(
      (await login(url, { username: 'editor', password: EDITOR_PASSWORD, scope: 'read' }, '127.0.0.12'))
        .status,
    ).toBe(200)

    const verified = await workspace.verifications()
    const pairs = Array.from({ length: verified.length / 2 }, (_, i) => verified.slice(2 * i, 2 * i + 2))
    expect(pairs).toHaveLength(attempts.length + 1)
    for (const pair of pairs) expect(pair.map(costOf).sort()).toEqual([ARGON2, 'bcrypt 08'])
    // The users' own hashes are verified for them only; an unknown user's are hashes of no user.
    const [ghost, editorWrong, adminWrong, nobody] = pairs as string[][]
    expect(editorWrong?.[0]).toBe(editor)
    expect(adminWrong?.[0]).toBe(admin)
    for (const hash of [...(ghost ?? []), ...(nobody ?? [])]) {
      expect(hash).not.toBe(admin)
      expect(hash).not.toBe(editor)
    }
  })

  it('with bcrypt users only, makes an unknown user cost one bcrypt verification of their cost, no argon2', async () => {
    const editor = nodeRedBcrypt().hashSync(EDITOR_PASSWORD, 8)
    await workspace.writeSettings({
      adminAuth: { users: [{ username: 'editor', password: editor, permissions: 'read' }] },
    })
    const { url } = await workspace.start({ countVerifications: true })
    for (const username of ['ghost', 'editor', 'nobody'])
      expect((await login(url, { username, password: 'wrong' }, '127.0.0.13')).status).toBe(401)
    const verified = await workspace.verifications()
    expect(verified.map(costOf)).toEqual(['bcrypt 08', 'bcrypt 08', 'bcrypt 08'])
    expect(verified[1]).toBe(editor)
    expect(verified[0]).not.toBe(editor)
  })
})
