import { createRequire } from 'node:module'
import { hasPermission, toPermissionList } from '@flowadmin/core'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'

/** Node-RED 4.1's own rule, from the Node-RED installed as a development dependency. */
type NodeRedRule = (userScope: string | string[], permission: string | string[]) => boolean
function nodeRedHasPermission(): NodeRedRule {
  const fromNodeRed = createRequire(createRequire(import.meta.url).resolve('node-red/package.json'))
  const editorApi = createRequire(fromNodeRed.resolve('@node-red/editor-api/package.json'))
  return editorApi('./lib/auth/permissions.js').hasPermission
}

/** The words permissions are made of, the tricky ones included. */
const WORDS = [
  '*',
  'read',
  'write',
  '*.read',
  '*.write',
  'flows.read',
  'flows.write',
  'nodes.read',
  'nodes.write',
  'settings.read',
  'a.b.read',
  '.read',
  '.write',
  'read.write',
  'xread',
  'flows.readx',
  'a\nb.read',
  '',
]

/** A permission word: a known one, or one built from pieces that meet at dots. */
const word = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...WORDS) },
  {
    weight: 1,
    arbitrary: fc
      .array(fc.constantFrom('flows', 'nodes', '*', 'read', 'write', '', 'x', '\n'), {
        minLength: 1,
        maxLength: 3,
      })
      .map((parts) => parts.join('.')),
  },
)
/** As settings give it: one word, or a list (possibly empty). */
const scope = fc.oneof(word, fc.array(word, { maxLength: 4 }))

describe("permissions mean what Node-RED's hasPermission means", () => {
  it('agrees with Node-RED 4.1 on generated pairs of granted and needed permissions, lists included', () => {
    const nodeRed = nodeRedHasPermission()
    let compared = 0
    fc.assert(
      fc.property(scope, scope, (granted, needed) => {
        compared++
        expect(hasPermission(toPermissionList(granted), needed), JSON.stringify({ granted, needed })).toBe(
          nodeRed(granted, needed),
        )
      }),
      { numRuns: 5000, seed: 20261125 },
    )
    expect(compared).toBe(5000)
  })

  it('agrees on every pair of the tricky words', () => {
    const nodeRed = nodeRedHasPermission()
    for (const granted of WORDS) {
      for (const needed of WORDS) {
        expect(hasPermission([granted], needed), `${granted} grants ${needed}`).toBe(nodeRed(granted, needed))
      }
    }
  })
})
