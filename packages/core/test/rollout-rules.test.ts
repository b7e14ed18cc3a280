// The rules of rollouts: which instances a rollout reaches, its state from its outcomes, each
// instance's target, what a rollback goes back to, and the variables a deploy delivers.
import { describe, expect, it } from 'vitest'
import {
  groupTarget,
  previousSnapshot,
  reaches,
  stateOf,
  targetOf,
  variablesDigest,
  variablesOf,
} from '../src/flows/rollout-rules.js'
import type { FlowVariable, RolloutOutcome, RolloutRecord } from '../src/ports/index.js'

const rollout = (overrides: Partial<RolloutRecord> = {}): RolloutRecord => ({
  id: 'r1',
  sequence: 1,
  group: 'line-1',
  snapshot: 's1',
  kind: 'rollout',
  strategy: { kind: 'all' },
  instances: ['a', 'b', 'c'],
  released: true,
  state: 'pending',
  reason: null,
  createdBy: 'alice',
  createdAt: 0,
  updatedAt: 0,
  ...overrides,
})

const staged = (overrides: Partial<RolloutRecord> = {}) =>
  rollout({ strategy: { kind: 'staged', first: 1 }, released: false, ...overrides })

const outcome = (instance: string, result: 'succeeded' | 'failed', rollout = 'r1'): RolloutOutcome => ({
  rollout,
  instance,
  outcome: result,
  rev: result === 'succeeded' ? `rev-${instance}` : null,
  message: result === 'failed' ? 'npm install failed: no such module' : null,
  missingCredentials: [],
  at: 1,
})

describe('reaches', () => {
  it('reaches every listed instance at once, and those joined later', () => {
    expect(['a', 'b', 'c', 'later'].map((i) => reaches(rollout(), i))).toEqual([true, true, true, true])
  })

  it('reaches a staged rollout’s first stage only, until it is released', () => {
    expect(['a', 'b', 'later'].map((i) => reaches(staged(), i))).toEqual([true, false, false])
    expect(['a', 'b', 'later'].map((i) => reaches(staged({ released: true }), i))).toEqual([true, true, true])
  })

  it('never reaches a later instance once stopped, though it still reaches those it reached', () => {
    const stopped = staged({ state: 'stopped' })
    expect(['a', 'b', 'later'].map((i) => reaches(stopped, i))).toEqual([true, false, false])
  })
})

describe('stateOf', () => {
  it('is pending until an instance says, running until every one succeeded', () => {
    expect(stateOf(rollout(), [])).toEqual({ state: 'pending', released: true, reason: null })
    expect(stateOf(rollout(), [outcome('a', 'succeeded')]).state).toBe('running')
    const all = ['a', 'b', 'c'].map((i) => outcome(i, 'succeeded'))
    expect(stateOf(rollout(), all)).toEqual({ state: 'succeeded', released: true, reason: null })
  })

  it('fails made at once when an instance fails, naming it and what it said', () => {
    expect(stateOf(rollout(), [outcome('a', 'succeeded'), outcome('b', 'failed')])).toEqual({
      state: 'failed',
      released: true,
      reason: 'b failed: npm install failed: no such module',
    })
  })

  it('releases the rest of a staged rollout once its first stage succeeded', () => {
    expect(stateOf(staged(), [outcome('a', 'succeeded')])).toEqual({
      state: 'running',
      released: true,
      reason: null,
    })
  })

  it('stops a staged rollout at its first stage’s failure, leaving the rest unreleased', () => {
    expect(stateOf(staged(), [outcome('a', 'failed')])).toEqual({
      state: 'stopped',
      released: false,
      reason: 'a failed: npm install failed: no such module; the other instances were left as they were',
    })
  })

  it('waits only for the instances still present, and keeps the word of those that left after saying', () => {
    const present = new Set(['a', 'b'])
    expect(stateOf(rollout(), [outcome('a', 'succeeded')], present).state).toBe('running')
    expect(stateOf(rollout(), [outcome('a', 'succeeded'), outcome('b', 'succeeded')], present)).toEqual({
      state: 'succeeded',
      released: true,
      reason: null,
    })
    // a said, then left: its success still counts.
    expect(stateOf(rollout(), [outcome('a', 'succeeded')], new Set(['b'])).state).toBe('running')
    expect(stateOf(rollout(), [], new Set())).toEqual({
      state: 'stopped',
      released: true,
      reason: 'every instance it reached left before saying',
    })
    // A staged rollout whose first stage left is not released to the rest.
    expect(stateOf(staged(), [], new Set(['b', 'c']))).toEqual({
      state: 'stopped',
      released: false,
      reason: 'every instance of its first stage left before saying',
    })
    // Its first stage is the one it was made with: b does not take a's place.
    expect(stateOf(staged(), [outcome('b', 'succeeded')], new Set(['a', 'b', 'c'])).state).toBe('pending')
  })

  it('counts only the outcomes of this rollout, and keeps a stopped one stopped', () => {
    expect(stateOf(rollout(), [outcome('a', 'failed', 'r0')]).state).toBe('pending')
    const stopped = rollout({ state: 'stopped', reason: 'replaced by rollout r2' })
    expect(
      stateOf(
        stopped,
        ['a', 'b', 'c'].map((i) => outcome(i, 'succeeded')),
      ),
    ).toEqual({
      state: 'stopped',
      released: true,
      reason: 'replaced by rollout r2',
    })
  })
})

describe('targetOf', () => {
  const older = rollout({ id: 'r1', sequence: 1, snapshot: 's1' })
  const newer = staged({ id: 'r2', sequence: 2, snapshot: 's2' })
  const other = rollout({ id: 'r3', sequence: 3, group: 'line-2', instances: ['c'], snapshot: 's3' })
  const byGroup = new Map([
    ['line-1', [newer, older]],
    ['line-2', [other]],
  ])

  it('is the newest rollout of the instance’s groups that reaches it', () => {
    expect(targetOf(byGroup, ['line-1'], 'a')?.id).toBe('r2')
    expect(targetOf(byGroup, ['line-1'], 'b')?.id).toBe('r1')
    expect(targetOf(byGroup, ['line-1', 'line-2'], 'c')?.id).toBe('r3')
    expect(targetOf(byGroup, ['line-3'], 'a')).toBeNull()
  })

  it('gives the group’s target to an instance that joined after its rollouts', () => {
    expect(targetOf(byGroup, ['line-1'], 'later')?.id).toBe('r1')
    expect(groupTarget([newer, older])?.id).toBe('r1')
  })
})

describe('previousSnapshot', () => {
  it('goes back to the newest other snapshot before the latest rollout, and forth again', () => {
    const r = (sequence: number, snapshot: string) => rollout({ id: `r${sequence}`, sequence, snapshot })
    expect(previousSnapshot([])).toBeNull()
    expect(previousSnapshot([r(1, 's1')])).toBeNull()
    expect(previousSnapshot([r(3, 's2'), r(2, 's2'), r(1, 's1')])).toBe('s1')
    // After a rollback to s1, rolling back goes to s2 again.
    expect(previousSnapshot([r(4, 's1'), r(3, 's2'), r(1, 's1')])).toBe('s2')
  })
})

describe('variablesOf', () => {
  const variable = (scope: FlowVariable['scope'], name: string, value: string): FlowVariable => ({
    scope,
    name,
    value,
    secret: false,
    by: 'alice',
    at: 1,
  })
  const variables = [
    variable({ kind: 'group', group: 'line-1' }, 'GREETING', 'line 1'),
    variable({ kind: 'group', group: 'line-1' }, 'SPEED', '5'),
    variable({ kind: 'group', group: 'plant' }, 'GREETING', 'plant'),
    variable({ kind: 'instance', instance: 'a' }, 'SPEED', '7'),
    variable({ kind: 'instance', instance: 'b' }, 'SPEED', '9'),
  ]

  it('takes the groups’ in the order of their names, then the instance’s own', () => {
    expect(variablesOf(variables, ['plant', 'line-1'], 'a').map((v) => `${v.name}=${v.value}`)).toEqual([
      'GREETING=plant',
      'SPEED=7',
    ])
    expect(variablesOf(variables, ['line-1'], 'c').map((v) => `${v.name}=${v.value}`)).toEqual([
      'GREETING=line 1',
      'SPEED=5',
    ])
  })

  it('digests them so that any change shows', () => {
    const a = variablesDigest(variablesOf(variables, ['line-1'], 'a'))
    const b = variablesDigest(variablesOf(variables, ['line-1'], 'b'))
    expect(a).toMatch(/^[0-9a-f]{16}$/)
    expect(a).not.toBe(b)
    expect(variablesDigest([])).toBe('0')
    expect(variablesDigest(variablesOf(variables, ['line-1'], 'a'))).toBe(a)
  })
})
