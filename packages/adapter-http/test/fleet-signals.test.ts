import { describe, expect, it } from 'vitest'
import { createFleetChanges } from '../src/fleet-changes.js'
import { createFleetLeases } from '../src/fleet-leases.js'
import { createFleetPulse } from '../src/fleet-pulse.js'

describe('the held polls’ changes', () => {
  it('a notice of the version the last look read looks no more: a change reaches the polls once', async () => {
    let version = '1'
    let reads = 0
    const changes = createFleetChanges(async () => {
      reads += 1
      return version
    }, 60_000)
    const waited = changes.wait('1', 5000)
    version = '2'
    changes.notify()
    expect(await waited).toBe(false)
    expect(reads).toBe(1)
    // The store's announcement of the same revision comes after: nothing more to read.
    const again = changes.wait('2', 50)
    changes.notify('2')
    expect(await again).toBe(true)
    expect(reads).toBe(1)
    changes.close()
  })

  it('the version its last look read is current while looks run, until a change is told of, or a look is due', async () => {
    let version = '1'
    const changes = createFleetChanges(async () => version, 60_000)
    expect(changes.current()).toBe(null)
    // A poll held on the current version keeps the looks going.
    const holding = new AbortController()
    const holder = changes.wait('1', 60_000, holding.signal)
    const waited = changes.wait('0', 5000)
    changes.notify('0')
    expect(await waited).toBe(false)
    expect(changes.current()).toBe('1')
    // Once no poll waits, nothing looks: what the last look read is no longer taken as current.
    holding.abort()
    await holder
    expect(changes.current()).toBe(null)
    const again = changes.wait('1', 60_000)
    changes.notify('0')
    await new Promise((resolve) => setTimeout(resolve, 20))
    expect(changes.current()).toBe('1')
    version = '2'
    changes.notify()
    expect(changes.current()).toBe(null)
    expect(await again).toBe(false)
    changes.close()
    // Unless looked at within its interval, what the last look read is not taken as current.
    const stale = createFleetChanges(async () => version, 1)
    const held = stale.wait('1', 5000)
    stale.notify('1')
    expect(await held).toBe(false)
    await new Promise((resolve) => setTimeout(resolve, 20))
    stale.close()
    expect(stale.current()).toBe(null)
  })
})

describe('the answers’ pulse', () => {
  it('ends a wait at the next notice, at once when one came since, else after its time', async () => {
    const pulse = createFleetPulse()
    const since = pulse.generation()
    const next = pulse.next(since, 5000)
    pulse.notify()
    expect(await next).toBe(true)
    expect(await pulse.next(since, 5000)).toBe(true)
    expect(await pulse.next(pulse.generation(), 10)).toBe(false)
    pulse.close()
    expect(await pulse.next(pulse.generation(), 5000)).toBe(false)
  })
})

describe('the leases’ batch', () => {
  /** A store whose touches take `touchMs`. */
  const writer = (touchMs = 0) => {
    const calls: string[] = []
    return {
      calls,
      async touch(instances: ReadonlyArray<{ id: string }>) {
        calls.push(`touch ${instances.map((one) => one.id).join(',')}`)
        await new Promise<void>((resolve) => setTimeout(resolve, touchMs))
        calls.push('touched')
      },
      async release(id: string) {
        calls.push(`release ${id}`)
      },
    }
  }

  it('writes the polls started within the flush time at once, and releases an instance whose last poll was lost', async () => {
    const store = writer()
    const leases = createFleetLeases(store, 30)
    leases.started('a', 'fleet')
    leases.started('b', 'fleet')
    leases.started('a', 'fleet')
    await new Promise((resolve) => setTimeout(resolve, 60))
    expect(store.calls).toEqual(['touch a,b', 'touched'])
    // One of a's two polls lost: another is held, a stays.
    await leases.ended('a', 'fleet', true)
    expect(store.calls).toEqual(['touch a,b', 'touched'])
    await leases.ended('a', 'fleet', true)
    await leases.ended('b', 'fleet', false)
    expect(store.calls).toEqual(['touch a,b', 'touched', 'release a'])
    expect(leases.held()).toBe(0)
    leases.close()
  })

  it('a poll lost before its lease was written is not written; one lost while it is written is released after', async () => {
    const store = writer(50)
    const leases = createFleetLeases(store, 10)
    leases.started('a', 'fleet')
    await leases.ended('a', 'fleet', true)
    await new Promise((resolve) => setTimeout(resolve, 30))
    expect(store.calls).toEqual(['release a'])
    leases.started('b', 'fleet')
    await new Promise((resolve) => setTimeout(resolve, 20))
    // Its lease is being written: released once that is done, not before.
    await leases.ended('b', 'fleet', true)
    expect(store.calls).toEqual(['release a', 'touch b', 'touched', 'release b'])
    leases.close()
  })
})
