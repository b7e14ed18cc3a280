import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const fixture = (name: string) => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url))

/**
 * The path of a child-process script. Children run the built package (`dist`), as a deployment
 * would, so the package must be built first (`pnpm build`, which CI runs before the tests).
 */
export function childScript(name: string): string {
  for (const built of ['../dist/index.js', '../../core/dist/index.js']) {
    if (!existsSync(fileURLToPath(new URL(built, import.meta.url)))) {
      throw new Error(
        `The child processes run the built packages: run \`pnpm build\` first (${built} is missing)`,
      )
    }
  }
  return fixture(name)
}
