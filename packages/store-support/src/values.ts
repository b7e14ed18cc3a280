// Drivers hand back integers as numbers, bigints or (PostgreSQL's bigint) text; lists as arrays
// (PostgreSQL's text[]) or JSON text (SQLite); booleans as booleans (PostgreSQL) or 0/1 (SQLite).
// The mappings of every row accept either.

export type Integer = number | bigint | string
export type List = string[] | string

export const integerOrNull = (value: Integer | null): number | null => (value === null ? null : Number(value))

export const listOf = (value: List | null): string[] =>
  value === null ? [] : typeof value === 'string' ? (JSON.parse(value) as string[]) : value

export const booleanOf = (value: boolean | Integer): boolean => Number(value) === 1

/** Text as the dialect wrote it (a name, a key) read back as it was given. */
export type ReadText = (stored: string) => string
export const asIs: ReadText = (stored) => stored
