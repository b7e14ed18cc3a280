import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { createFlowsTypeUsage } from '../src/index.js'

let dir: string
let file: string
beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'flowadmin-flows-'))
  file = path.join(dir, 'flows.json')
})
afterEach(async () => {
  await rm(dir, { recursive: true, force: true })
})

const inUse = async () => [...((await createFlowsTypeUsage(file).typesInUse()) ?? ['unreadable'])].sort()

describe('flows type usage', () => {
  it('counts the type of every node', async () => {
    await writeFile(
      file,
      JSON.stringify([
        { id: '1', type: 'tab' },
        { id: '2', type: 'greeting', z: '1' },
        { id: '3', type: 'greeting', z: '1' },
        { id: '4', type: 'debug', z: '1' },
        { id: '5' },
        null,
        'junk',
        { id: '6', type: 7 },
      ]),
    )
    expect(await inUse()).toEqual(['debug', 'greeting', 'tab'])
  })

  it('accepts the {"flows": [...]} form too', async () => {
    await writeFile(file, JSON.stringify({ rev: 'abc', flows: [{ id: '1', type: 'random' }] }))
    expect(await inUse()).toEqual(['random'])
  })

  it('reads the file at each call, so a new deploy counts at once', async () => {
    const usage = createFlowsTypeUsage(file)
    expect(await usage.typesInUse()).toEqual(new Set())
    await writeFile(file, JSON.stringify([{ id: '1', type: 'upper' }]))
    expect(await usage.typesInUse()).toEqual(new Set(['upper']))
  })

  it('means no types in use when the file is missing or empty', async () => {
    expect(await inUse()).toEqual([])
    await writeFile(file, '  \n')
    expect(await inUse()).toEqual([])
  })

  it.each([
    ['invalid JSON', '[{"type": "greeting"', /the flows file .*flows\.json is not valid JSON/],
    ['not an array', '{"type": "greeting"}', /the flows file .*flows\.json must hold an array of nodes/],
    ['a bare string', '"greeting"', /must hold an array of nodes/],
  ])('refuses to guess when the file holds %s, and says why', async (_, content, message) => {
    await writeFile(file, content)
    const reasons: string[] = []
    expect(await createFlowsTypeUsage(file, (reason) => reasons.push(reason)).typesInUse()).toBeNull()
    expect(reasons).toEqual([expect.stringMatching(message)])
  })

  it('refuses to guess when the file cannot be read', async () => {
    const folder = path.join(dir, 'folder.json')
    await mkdir(folder)
    const reasons: string[] = []
    expect(await createFlowsTypeUsage(folder, (reason) => reasons.push(reason)).typesInUse()).toBeNull()
    expect(reasons).toEqual([expect.stringMatching(/cannot read the flows file/)])
  })
})
