/**
 * Where a JSON text goes wrong, for a message that points at it (`settings.json:3:14: ...`).
 * JSON.parse tells only a character offset for some mistakes, and for others repeats a piece of
 * the text instead, which may hold a password; this reads the text by JSON's grammar and stops at
 * the first mistake. It never recurses, so no nesting is too deep for it.
 */
export interface JsonMistake {
  /** 1-based. */
  line: number
  /** 1-based, in UTF-16 code units as editors count them for most text. */
  column: number
  /** What was expected and what was found, e.g. `expected a value, found '}'`. */
  problem: string
}

class Stop {
  constructor(
    readonly at: number,
    readonly problem: string,
  ) {}
}

const SPACE = new Set([' ', '\t', '\n', '\r'])
const ESCAPES = new Set(['"', '\\', '/', 'b', 'f', 'n', 'r', 't'])
const WORD = /[A-Za-z0-9_$]+/y
const DIGITS = /[0-9]+/y
const HEX4 = /[0-9A-Fa-f]{4}/y
const NAMED_CONTROLS: Record<string, string> = { '\t': 'a tab' }

/** What stands at `at`, for a message: the end, a word, or one character. */
function found(text: string, at: number): string {
  if (at >= text.length) return 'the end of the file'
  const char = text[at] as string
  if (char === "'") return 'a single quote (JSON takes double quotes)'
  if (char === '/') return "'/' (JSON has no comments)"
  WORD.lastIndex = at
  const word = WORD.exec(text)?.[0]
  if (word !== undefined) return `'${word.length > 20 ? `${word.slice(0, 20)}…` : word}'`
  const code = char.codePointAt(0) as number
  if (code < 0x20 || code === 0x7f || code === 0xfeff) {
    return `U+${code.toString(16).toUpperCase().padStart(4, '0')}`
  }
  return `'${String.fromCodePoint(text.codePointAt(at) as number)}'`
}

/**
 * The first mistake in `text` read as JSON, or null when there is none (JSON.parse would accept
 * it).
 */
export function jsonMistake(text: string): JsonMistake | null {
  try {
    readJson(text)
    return null
  } catch (error) {
    if (!(error instanceof Stop)) throw error
    const before = text.slice(0, error.at)
    const lineStart = before.lastIndexOf('\n') + 1
    return {
      line: before.split('\n').length,
      column: error.at - lineStart + 1,
      problem: error.problem,
    }
  }
}

function readJson(text: string): void {
  let at = 0
  /** The containers open around the value being read: `}` or `]`, innermost last. */
  const closers: string[] = []
  const stop = (problem: string, where = at): never => {
    throw new Stop(where, problem)
  }
  const space = () => {
    while (at < text.length && SPACE.has(text[at] as string)) at++
  }

  const string = () => {
    const start = at
    at++
    for (;;) {
      if (at >= text.length) stop('a string that is never closed', start)
      const char = text[at] as string
      if (char === '"') {
        at++
        return
      }
      if (char === '\\') {
        const escaped = text[at + 1]
        if (escaped === 'u') {
          HEX4.lastIndex = at + 2
          if (!HEX4.test(text)) stop('\\u in a string must be followed by four hexadecimal digits')
          at += 6
          continue
        }
        if (escaped === undefined || !ESCAPES.has(escaped)) {
          stop(`an unknown escape \\${escaped ?? ''} in a string`)
        }
        at += 2
        continue
      }
      if (char === '\n' || char === '\r') stop('a string that is not closed before the end of its line')
      if (char < ' ') {
        const name = NAMED_CONTROLS[char]
        stop(
          name === undefined
            ? `a control character (${found(text, at)}) inside a string (write it as an escape such as \\u0001)`
            : `${name} inside a string (write it as ${JSON.stringify(char).slice(1, -1)})`,
        )
      }
      at++
    }
  }

  const digits = (after: string) => {
    DIGITS.lastIndex = at
    const run = DIGITS.exec(text)?.[0]
    if (run === undefined) stop(`expected a digit${after}, found ${found(text, at)}`)
    at += (run as string).length
  }

  const number = () => {
    if (text[at] === '-') at++
    if (text[at] === '0') at++
    else digits('')
    if (text[at] === '.') {
      at++
      digits(' after the decimal point')
    }
    if (text[at] === 'e' || text[at] === 'E') {
      at++
      if (text[at] === '+' || text[at] === '-') at++
      digits(' in the exponent')
    }
  }

  /** A property name and its colon, at a place where one must be. */
  const name = (afterComma: boolean) => {
    space()
    if (text[at] !== '"') {
      const trailing = afterComma && text[at] === '}' ? ' (a comma too many before it?)' : ''
      stop(`expected a property name in double quotes, found ${found(text, at)}${trailing}`)
    }
    string()
    space()
    if (text[at] !== ':') stop(`expected ':' after the property name, found ${found(text, at)}`)
    at++
  }

  /** Reads a value; an object or array is opened and its first member is read by the caller's loop. */
  const value = (afterComma: boolean): boolean => {
    space()
    const char = text[at]
    const closer = char === '{' ? '}' : char === '[' ? ']' : undefined
    if (closer !== undefined) {
      at++
      space()
      if (text[at] === closer) {
        at++
        return false
      }
      // An object's first member starts with its name.
      if (closer === '}') name(false)
      closers.push(closer)
      return true
    }
    if (char === '"') {
      string()
      return false
    }
    if (char === '-' || (char !== undefined && char >= '0' && char <= '9')) {
      number()
      return false
    }
    for (const literal of ['true', 'false', 'null']) {
      if (text.startsWith(literal, at)) {
        at += literal.length
        return false
      }
    }
    const trailing = afterComma && char === ']' ? ' (a comma too many before it?)' : ''
    return stop(`expected a value, found ${found(text, at)}${trailing}`)
  }

  let afterComma = false
  for (;;) {
    // A value opening a container asks for its first member; any other is complete.
    if (value(afterComma)) {
      afterComma = false
      continue
    }
    afterComma = false
    // Close what the value completes, up to the next member.
    for (;;) {
      const closer = closers.at(-1)
      space()
      if (closer === undefined) {
        if (at < text.length)
          stop(`expected the end of the file after the settings, found ${found(text, at)}`)
        return
      }
      if (text[at] === ',') {
        at++
        if (closer === '}') name(true)
        // Only a value of an array may be missing right after a comma: `[1, 2,]`.
        afterComma = closer === ']'
        break
      }
      if (text[at] === closer) {
        at++
        closers.pop()
        continue
      }
      stop(`expected ',' or '${closer}', found ${found(text, at)}`)
    }
  }
}
