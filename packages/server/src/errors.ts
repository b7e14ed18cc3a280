/** Exit code for a failure at run time: an unreadable file, a busy port, a broken database. */
export const EXIT_RUNTIME = 1
/** Exit code for a mistake in the command line or the settings. */
export const EXIT_USAGE = 2

/**
 * A start-up failure with a message fit to print as it is (no stack trace), and the exit code
 * the CLI ends with.
 */
export class StartupError extends Error {
  override readonly name: string = 'StartupError'
  constructor(
    message: string,
    readonly exitCode: number = EXIT_RUNTIME,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

/** A settings file or command line that cannot be used; the message names the file and field. */
export class SettingsError extends StartupError {
  override readonly name: string = 'SettingsError'
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, EXIT_USAGE, options)
  }
}
