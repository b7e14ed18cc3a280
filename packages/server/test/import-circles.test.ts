// The check CI runs for import circles among the sources of packages/*/src
// (scripts/check-import-circles.mjs), over small trees of its own.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  findCircles,
  importGraph,
  relativeImports,
  sourceFiles,
} from '../../../scripts/check-import-circles.mjs'

let root: string
beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'flowadmin-circles-'))
})
afterEach(() => rm(root, { recursive: true, force: true }))

/** Writes each file (a path under the tree's root) with its source. */
async function tree(files: Record<string, string>): Promise<void> {
  for (const [name, source] of Object.entries(files)) {
    const file = path.join(root, name)
    await mkdir(path.dirname(file), { recursive: true })
    await writeFile(file, source)
  }
}

/** The circles of the tree, their files relative to its root. */
function circles() {
  const local = (file: string) => path.relative(root, file)
  return findCircles(importGraph(sourceFiles(root))).map((circle) => ({
    files: circle.files.map(local),
    paths: circle.paths.map((files) => files.map(local)),
  }))
}

describe('the import circles check', () => {
  it('reads every relative import a file makes, types and re-exports too, and nothing in comments or strings', () => {
    const source = [
      "import type { A } from './a.js'",
      "import { type B, c } from '../b.js'",
      "export * from './c.js'",
      "export type { D } from './d/index.js'",
      "const e = await import('./e.js')",
      "import { Hono } from 'hono'",
      "import { readFile } from 'node:fs'",
      "// import './commented.js'",
      'const text = "import \'./quoted.js\'"',
    ].join('\n')
    expect(relativeImports(source)).toEqual(['./a.js', '../b.js', './c.js', './d/index.js', './e.js'])
  })

  it('finds none where imports go one way, and leaves tests and other folders out', async () => {
    await tree({
      'packages/a/src/index.ts': "export * from './x.js'\nimport type { Y } from './y/y.js'\n",
      'packages/a/src/x.ts': "import { z } from './z.js'\nimport { Hono } from 'hono'\nexport const x = z\n",
      'packages/a/src/y/y.ts': "import type { Z } from '../z.js'\nexport type Y = Z\n",
      'packages/a/src/z.ts': 'export const z = 1\nexport type Z = number\n',
      'packages/a/src/z.test.ts': "import { x } from './index.js'\n",
      'packages/a/test/helper.ts': "import { x } from '../src/index.js'\n",
      'packages/b/README.md': '',
    })
    expect(sourceFiles(root).map((file) => path.relative(root, file))).toEqual([
      'packages/a/src/index.ts',
      'packages/a/src/x.ts',
      'packages/a/src/y/y.ts',
      'packages/a/src/z.ts',
    ])
    expect(circles()).toEqual([])
  })

  it('finds each circle, of types and re-exports too, with every path of imports that goes round it', async () => {
    await tree({
      // Two files that need each other: one for a type only, the other re-exporting.
      'packages/a/src/auth/login.ts':
        "import type { Token } from '../tokens/tokens.js'\nexport const login = 1\n",
      'packages/a/src/tokens/tokens.ts':
        "export { login } from '../auth/login.js'\nexport type Token = string\n",
      // Three files, two paths round them.
      'packages/b/src/reload.ts':
        "import { stores } from './stores.js'\nimport { start } from './start.js'\n",
      'packages/b/src/start.ts': "import { reload } from './reload.js'\nexport const start = 1\n",
      'packages/b/src/stores.ts': "import { start } from './start.js'\nexport const stores = 1\n",
      // A file importing itself, and one that only imports a circle's file.
      'packages/b/src/self.ts': "import './self.js'\n",
      'packages/b/src/user.ts': "import { start } from './start.js'\n",
    })
    expect(circles()).toEqual([
      {
        files: ['packages/a/src/auth/login.ts', 'packages/a/src/tokens/tokens.ts'],
        paths: [
          ['packages/a/src/auth/login.ts', 'packages/a/src/tokens/tokens.ts', 'packages/a/src/auth/login.ts'],
        ],
      },
      {
        files: ['packages/b/src/reload.ts', 'packages/b/src/start.ts', 'packages/b/src/stores.ts'],
        paths: [
          [
            'packages/b/src/reload.ts',
            'packages/b/src/stores.ts',
            'packages/b/src/start.ts',
            'packages/b/src/reload.ts',
          ],
          ['packages/b/src/reload.ts', 'packages/b/src/start.ts', 'packages/b/src/reload.ts'],
        ],
      },
      { files: ['packages/b/src/self.ts'], paths: [['packages/b/src/self.ts', 'packages/b/src/self.ts']] },
    ])
  })
})
