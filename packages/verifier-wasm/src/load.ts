import { readFile } from 'node:fs/promises'
import { createRequire } from 'node:module'

/**
 * The bytes of `argon2.wasm`, read from the installed `@phi-ag/argon2` package. For runtimes with
 * a file system and `node:fs` (Node, Bun, Deno); workerd imports the module instead.
 */
export async function loadArgon2Wasm(): Promise<Uint8Array<ArrayBuffer>> {
  return new Uint8Array(await readFile(createRequire(import.meta.url).resolve('@phi-ag/argon2/argon2.wasm')))
}
