// `flowadmin hash-pw`: a password read from standard input or a prompt, and its argon2id hash.
import { hashPassword } from '../adapters/argon2.js'
import { HASH_PW } from './commands.js'
import { readPassword } from './password-input.js'
import { helpOf, parseCommand } from './usage.js'

/** `flowadmin hash-pw`: prints the argon2id hash of the password read. */
export async function hashPwCommand(args: string[]): Promise<void> {
  const { values } = parseCommand(HASH_PW, args)
  if (values.help) {
    process.stdout.write(helpOf(HASH_PW))
    return
  }
  const password = await readPassword()
  process.stdout.write(`${await hashPassword(password)}\n`)
}
