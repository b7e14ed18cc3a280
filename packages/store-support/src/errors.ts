/** The `code` a driver or the file system puts on its errors (a SQLSTATE, `SQLITE_BUSY`, `ENOENT`), or ''. */
export const codeOf = (error: unknown): string =>
  typeof error === 'object' && error !== null && typeof (error as { code?: unknown }).code === 'string'
    ? (error as { code: string }).code
    : ''

/**
 * A store that could not be opened or used, with a `code` saying why, for a program to tell the
 * cases apart. Each store names its own subclass and says where it failed.
 */
export class StoreError<Code extends string> extends Error {
  readonly code: Code

  constructor(code: Code, message: string, options?: { cause?: unknown }) {
    super(message, options)
    this.code = code
  }
}
