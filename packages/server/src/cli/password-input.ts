import { EXIT_USAGE, StartupError } from '../errors.js'

/** Exit code of an interrupted prompt (128 + SIGINT), as shells report Ctrl-C. */
const EXIT_INTERRUPTED = 130

/**
 * The password to hash: the first line of standard input when it is piped (without its line
 * ending), else typed at a prompt without echo, twice. An empty password is a usage error.
 */
export async function readPassword(stdin: NodeJS.ReadStream = process.stdin): Promise<string> {
  let password: string
  if (stdin.isTTY) {
    password = await promptHidden(stdin, 'Password: ')
    if (password !== '' && (await promptHidden(stdin, 'Repeat password: ')) !== password) {
      throw new StartupError('the passwords do not match', EXIT_USAGE)
    }
  } else {
    password = await firstLine(stdin)
  }
  if (password === '') throw new StartupError('the password is empty', EXIT_USAGE)
  return password
}

/** The first line of a stream, read up to its first line break only. */
export function firstLine(input: NodeJS.ReadableStream): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = ''
    const finish = () => {
      input.off('data', onData)
      input.off('end', finish)
      input.off('error', reject)
      input.pause()
      resolve(text.replace(/\r?\n[\s\S]*$/, ''))
    }
    const onData = (chunk: Buffer | string) => {
      text += chunk.toString()
      if (text.includes('\n')) finish()
    }
    input.on('data', onData)
    input.once('end', finish)
    input.once('error', reject)
  })
}

/** Reads one line from a terminal in raw mode, echoing nothing; the prompt goes to stderr. */
function promptHidden(stdin: NodeJS.ReadStream, prompt: string): Promise<string> {
  process.stderr.write(prompt)
  return new Promise((resolve, reject) => {
    let text = ''
    const done = (outcome: () => void) => {
      stdin.off('data', onData)
      stdin.setRawMode(false)
      stdin.pause()
      process.stderr.write('\n')
      outcome()
    }
    const onData = (chunk: Buffer) => {
      for (const char of chunk.toString('utf8')) {
        if (char === '\r' || char === '\n' || char === '\u0004') return done(() => resolve(text))
        if (char === '\u0003') {
          return done(() => reject(new StartupError('interrupted', EXIT_INTERRUPTED)))
        }
        if (char === '\u007f' || char === '\b') text = [...text].slice(0, -1).join('')
        else if (char >= ' ') text += char
      }
    }
    stdin.setRawMode(true)
    stdin.resume()
    stdin.on('data', onData)
  })
}
