import { readFile } from 'node:fs/promises'
import type { TypeUsage } from '@flowadmin/core'

/**
 * The types in use, read from the flows file at each call (flows change when they are deployed).
 * The file holds an array of node objects, or an object whose `flows` is that array; the `type`
 * of each counts. A missing or empty file means no flows and so no types in use.
 *
 * A file that cannot be read or parsed gives null, after telling `onUnreadable` why (the message
 * names the file: it is for the server's log, never for a response). The core then refuses every
 * disable rather than risk removing a type a flow needs; enabling never asks, so it still works.
 */
export function createFlowsTypeUsage(
  file: string,
  onUnreadable: (message: string) => void = () => {},
): TypeUsage {
  const unreadable = (message: string) => {
    onUnreadable(message)
    return null
  }
  return {
    async typesInUse() {
      let source: string
      try {
        source = await readFile(file, 'utf8')
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Set()
        return unreadable(`cannot read the flows file ${file}: ${(error as Error).message}`)
      }
      let parsed: unknown
      try {
        parsed = source.trim() === '' ? [] : JSON.parse(source)
      } catch (error) {
        return unreadable(`the flows file ${file} is not valid JSON: ${(error as Error).message}`)
      }
      const nodes =
        typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
          ? (parsed as { flows?: unknown }).flows
          : parsed
      if (!Array.isArray(nodes)) return unreadable(`the flows file ${file} must hold an array of nodes`)
      const types = new Set<string>()
      for (const node of nodes) {
        const type = (node as { type?: unknown } | null)?.type
        if (typeof type === 'string' && type !== '') types.add(type)
      }
      return types
    },
  }
}
