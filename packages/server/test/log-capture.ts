// The server's logger over an array: every line as written, and parsed.
import { createLogger, type Logger } from '../src/index.js'

export interface CapturedLog {
  logger: Logger
  /** Every line written, as written (with its newline). */
  lines: string[]
  /** Every line, parsed. */
  entries(): Array<Record<string, unknown> & { level: string; msg: string }>
  /** `level: msg` of every line, for assertions on what was said. */
  said(): string[]
}

export function captureLog(): CapturedLog {
  const lines: string[] = []
  const logger = createLogger({ write: (line) => lines.push(line) })
  const entries = () => lines.map((line) => JSON.parse(line))
  return { logger, lines, entries, said: () => entries().map((entry) => `${entry.level}: ${entry.msg}`) }
}
