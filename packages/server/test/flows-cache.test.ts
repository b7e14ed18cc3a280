import { mkdtemp, rename, rm, unlink, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { createFlowsTypeUsage } from '../src/index.js'

/** Counts the reads of the flows file, to tell the kept set from a fresh parse. */
const reads = vi.hoisted(() => ({ count: 0 }))
vi.mock('node:fs/promises', async (original) => {
  const actual = await original<typeof import('node:fs/promises')>()
  return {
    ...actual,
    readFile: (...args: Parameters<typeof actual.readFile>) => {
      reads.count++
      return actual.readFile(...args)
    },
  }
})

let dir: string
let file: string
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'flowadmin-flows-cache-'))
  file = path.join(dir, 'flows.json')
  reads.count = 0
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const flows = (...types: string[]) => JSON.stringify(types.map((type, i) => ({ id: `n${i}`, type })))
/** A minute ago: older than the file system's clock could blur. */
const settle = (at = new Date(Date.now() - 60_000)) => utimes(file, at, at)

describe('flows type usage, kept in memory', () => {
  it('reads a settled file once, and again only when it changes', async () => {
    const usage = createFlowsTypeUsage(file)
    await writeFile(file, flows('aaa', 'bbb'))
    await settle()
    expect(await usage.typesInUse()).toEqual(new Set(['aaa', 'bbb']))
    expect(await usage.typesInUse()).toEqual(new Set(['aaa', 'bbb']))
    expect(await usage.typesInUse()).toEqual(new Set(['aaa', 'bbb']))
    expect(reads.count).toBe(1)

    await writeFile(file, flows('aaa', 'ccc'))
    expect(await usage.typesInUse()).toEqual(new Set(['aaa', 'ccc']))
  })

  it('sees a rewrite of the same size whose modification time was put back', async () => {
    const usage = createFlowsTypeUsage(file)
    const then = new Date(Date.now() - 60_000)
    await writeFile(file, flows('aaa'))
    await settle(then)
    expect(await usage.typesInUse()).toEqual(new Set(['aaa']))
    await writeFile(file, flows('zzz'))
    await settle(then) // same size, same mtime: only the change time tells
    expect(await usage.typesInUse()).toEqual(new Set(['zzz']))
  })

  it('sees writes of the same size made within one tick of the clock, however quick', async () => {
    const usage = createFlowsTypeUsage(file)
    for (const type of ['aaa', 'bbb', 'ccc', 'ddd', 'eee']) {
      await writeFile(file, flows(type))
      expect(await usage.typesInUse()).toEqual(new Set([type]))
    }
  })

  it('sees a deploy that replaces the file (written beside it, then renamed over it)', async () => {
    const usage = createFlowsTypeUsage(file)
    await writeFile(file, flows('aaa'))
    await settle()
    expect(await usage.typesInUse()).toEqual(new Set(['aaa']))
    const next = path.join(dir, 'flows.json.tmp')
    await writeFile(next, flows('bbb'))
    await utimes(next, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000))
    await rename(next, file)
    expect(await usage.typesInUse()).toEqual(new Set(['bbb']))
  })

  it('sees the file removed, and it coming back broken', async () => {
    const reasons: string[] = []
    const usage = createFlowsTypeUsage(file, (reason) => reasons.push(reason))
    await writeFile(file, flows('aaa'))
    await settle()
    expect(await usage.typesInUse()).toEqual(new Set(['aaa']))
    await unlink(file)
    expect(await usage.typesInUse()).toEqual(new Set())
    await writeFile(file, '[{"type": "aaa"')
    await settle()
    expect(await usage.typesInUse()).toBeNull()
    expect(reasons).toEqual([expect.stringMatching(/is not valid JSON/)])
  })
})
