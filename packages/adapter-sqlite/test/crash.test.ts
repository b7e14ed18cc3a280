import { createCore } from '@flowadmin/core'
import {
  createFakeLoader,
  createFakeTypeUsage,
  createFixedClock,
  createPlainHasher,
  createSeededNumbers,
} from '@flowadmin/testkit'
import { afterAll, expect, it } from 'vitest'
import { createSqliteStores, openDatabase } from '../src/index.js'
import { startChild } from './children.js'
import { createTempFolder } from './temp.js'

const temp = createTempFolder()
afterAll(() => temp.remove())

const ROUNDS = 20
/** Change it (or set CRASH_SEED) to explore other kill moments; a failure names the seed it ran. */
const SEED = Number(process.env.CRASH_SEED ?? 20260101)
const MODULE = '@acme/flow-tools'

type Line =
  | { op: 'ready'; flags: boolean[] }
  | { op: 'issued' | 'revoking' | 'revoked'; token: string }
  | { op: 'toggling'; flags: boolean[] }
  | { op: 'toggled'; flags: boolean[] }

/** Whole numbers below `below`, from the seeded sequence the worker uses too. */
function seeded(seed: number) {
  const next = createSeededNumbers(seed)
  return (below: number) => Math.floor(next() * below)
}

/** What the database must hold, from the acknowledgements seen so far. */
interface Expected {
  /** issued: acknowledged; revoking: a revoke began but was not acknowledged; revoked: acknowledged. */
  tokens: Map<string, 'issued' | 'revoking' | 'revoked'>
  flags: boolean[] | null
  /** A toggle that began after the last acknowledged one, if any. */
  pendingFlags: boolean[] | null
}

function record(expected: Expected, line: Line) {
  if (line.op === 'issued') expected.tokens.set(line.token, 'issued')
  else if (line.op === 'revoking') expected.tokens.set(line.token, 'revoking')
  else if (line.op === 'revoked') expected.tokens.set(line.token, 'revoked')
  else if (line.op === 'toggling') expected.pendingFlags = line.flags
  else if (line.op === 'toggled') {
    expected.flags = line.flags
    expected.pendingFlags = null
  }
}

/** Reopens the file after a kill and checks it against the acknowledgements; settles the undecided. */
async function check(path: string, expected: Expected, context: string) {
  const db = openDatabase(path) // runs its own quick_check
  expect(db.prepare('PRAGMA integrity_check').all(), context).toEqual([{ integrity_check: 'ok' }])
  const stores = createSqliteStores(db)
  const hasher = createPlainHasher()
  const core = createCore(
    {
      stores,
      verifier: hasher,
      loader: createFakeLoader(),
      typeUsage: createFakeTypeUsage(),
      clock: createFixedClock(Date.now()),
    },
    { adminAuth: { users: [{ username: 'admin', password: hasher.hash('pw'), permissions: '*' }] } },
  )
  for (const [token, state] of expected.tokens) {
    const valid = (await core.authenticate(token)).ok
    if (state === 'issued') expect(valid, `${context}: an acknowledged token is gone`).toBe(true)
    if (state === 'revoked') expect(valid, `${context}: a revoked token is valid again`).toBe(false)
    if (state === 'revoking') expected.tokens.set(token, valid ? 'issued' : 'revoked')
  }
  const module = await core.modules.get(MODULE)
  const flags = module.ok ? module.value.nodes.map((set) => set.enabled) : null
  const allowed = [expected.flags, expected.pendingFlags].filter((candidate) => candidate !== null)
  expect(allowed, `${context}: module flags ${JSON.stringify(flags)}`).toContainEqual(flags)
  expected.flags = flags
  expected.pendingFlags = null
  await stores.close()
}

it(`keeps every acknowledged write through ${ROUNDS} kills at random moments (seed ${SEED})`, async () => {
  const path = temp.file()
  const random = seeded(SEED)
  const expected: Expected = { tokens: new Map(), flags: null, pendingFlags: null }
  let acknowledged = 0
  for (let round = 1; round <= ROUNDS; round++) {
    const context = `seed ${SEED}, round ${round}`
    const killAfter = 1 + random(120) // acknowledgements in this round before the kill
    const delayMs = random(4) // 0: at once, in the handler that read the acknowledgement
    let seen = 0
    const child = startChild('crash-worker.mjs', [path, String(random(2 ** 31))], (line) => {
      const entry = line as Line
      if (entry.op === 'ready') {
        if (expected.flags === null) expected.flags = entry.flags
        return
      }
      record(expected, entry)
      if (entry.op.endsWith('ing') || ++seen !== killAfter) return
      if (delayMs === 0) child.process.kill('SIGKILL')
      else setTimeout(() => child.process.kill('SIGKILL'), delayMs)
    })
    const ended = await child.ended
    expect(ended, `${context}: ${ended.stderr}`).toMatchObject({ signal: 'SIGKILL', stderr: '' })
    expect(seen, context).toBeGreaterThanOrEqual(killAfter)
    acknowledged += seen
    await check(path, expected, context)
  }
  const states = [...expected.tokens.values()]
  // The rounds did exercise each kind of write.
  expect(states.filter((state) => state === 'issued').length).toBeGreaterThan(ROUNDS)
  expect(states.filter((state) => state === 'revoked').length).toBeGreaterThan(ROUNDS / 2)
  expect(acknowledged).toBeGreaterThan(ROUNDS * 20)
}, 60_000)
