import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll } from 'vitest'

/** A fresh folder, removed after the file's tests; `file()` names a new database in it. */
export function tempFolder() {
  const path = mkdtempSync(join(tmpdir(), 'flowadmin-builtin-'))
  afterAll(() => rmSync(path, { recursive: true, force: true }))
  let count = 0
  return { path, file: (name = `store-${++count}.db`) => join(path, name) }
}
