import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** A fresh folder under the system temp folder, and a way to remove it with everything in it. */
export function createTempFolder(prefix = 'flowadmin-sqlite-') {
  const path = mkdtempSync(join(tmpdir(), prefix))
  let count = 0
  return {
    path,
    /** A new database path inside the folder; the file does not exist yet. */
    file(name = `store-${++count}.db`) {
      return join(path, name)
    },
    remove() {
      rmSync(path, { recursive: true, force: true })
    },
  }
}
