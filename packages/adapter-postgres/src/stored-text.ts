// Text as PostgreSQL stores it. Its text type holds neither NUL nor a lone surrogate, and keys,
// names and what instances report may carry either: such units are written as `\uXXXX`.

/** A UTF-16 unit written as `\uXXXX`. */
const escaped = (unit: string) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`

/**
 * A key as stored. Keys are any text, but PostgreSQL text holds neither NUL nor a lone surrogate:
 * those, any surrogate and the backslash are written as `\uXXXX`, which keeps distinct keys distinct.
 */
export const storedKey = (key: string): string =>
  // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is one of the units to escape.
  key.replace(/[\\\u0000\uD800-\uDFFF]/g, escaped)

/** The text storedKey escaped, as it was. */
export const fromStored = (stored: string): string =>
  stored.replace(/\\u([0-9a-f]{4})/g, (_match, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))

// biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is one of the units to escape.
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g

/**
 * Text as the trail stores it: NUL and lone surrogates, which an instance (or a failed sign-in's
 * username) may carry, are written as `\uXXXX`; the rest is kept as it is.
 */
export const storedText = <T extends string | null | undefined>(value: T): T =>
  (typeof value === 'string' ? value.replace(UNSTORABLE, escaped) : value) as T
