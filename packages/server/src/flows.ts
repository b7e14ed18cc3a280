import { readFile } from 'node:fs/promises'
import type { TypeUsage } from '@flowadmin/core'

/**
 * The deployed flows cannot be read, so no one can tell which types they use. Thrown by
 * `typesInUse()`: a disable is then refused (a 500 without detail; the message is logged) rather
 * than risk removing a type a flow needs. Enabling never asks, so it still works.
 */
export class FlowsFileError extends Error {
  override readonly name: string = 'FlowsFileError'
}

/**
 * The types in use, read from the flows file at each call (flows change when they are deployed).
 * The file holds an array of node objects, or an object whose `flows` is that array; the `type`
 * of each counts. A missing file means no flows and so no types in use.
 */
export function createFlowsTypeUsage(file: string): TypeUsage {
  return {
    async typesInUse() {
      let source: string
      try {
        source = await readFile(file, 'utf8')
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new Set()
        throw new FlowsFileError(`cannot read the flows file ${file}: ${(error as Error).message}`)
      }
      let parsed: unknown
      try {
        parsed = source.trim() === '' ? [] : JSON.parse(source)
      } catch (error) {
        throw new FlowsFileError(`the flows file ${file} is not valid JSON: ${(error as Error).message}`)
      }
      const nodes =
        typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)
          ? (parsed as { flows?: unknown }).flows
          : parsed
      if (!Array.isArray(nodes)) {
        throw new FlowsFileError(`the flows file ${file} must hold an array of nodes`)
      }
      const types = new Set<string>()
      for (const node of nodes) {
        const type = (node as { type?: unknown } | null)?.type
        if (typeof type === 'string' && type !== '') types.add(type)
      }
      return types
    },
  }
}
