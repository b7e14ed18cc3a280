import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

// The files found beside this package's code. This module stays at the top of src/ (and so of
// dist/, and of the installable package's bundle), so the paths below hold in every build.

/** The product version, from this package's manifest (one level above both src and dist). */
export const VERSION: string = JSON.parse(
  readFileSync(new URL('../package.json', import.meta.url), 'utf8'),
).version

/**
 * The demo's settings file, `examples/demo/settings.json` of the repository this package was
 * built in; an installed package has none.
 */
export const DEMO_SETTINGS: string = fileURLToPath(
  new URL('../../../examples/demo/settings.json', import.meta.url),
)
