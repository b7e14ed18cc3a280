import { type DomainError, err, ok, type Result } from '../errors.js'
import type { TypeUsage } from '../ports/index.js'

/** The check every change that takes node sets away passes: which of their types the flows use. */
export function createTypeCheck(typeUsage: TypeUsage) {
  return {
    /** The types of `types` the deployed flows use, or an error when the flows cannot be read. */
    async blockedTypes(
      types: readonly string[],
    ): Promise<Result<string[], Extract<DomainError, { code: 'flows_unavailable' }>>> {
      const inUse = await typeUsage.typesInUse()
      if (inUse === null) return err({ code: 'flows_unavailable' })
      return ok([...new Set(types.filter((type) => inUse.has(type)))])
    },

    /** The refusal of a change that would remove types in use, naming who uses them when told. */
    async inUse(types: string[]) {
      const instances = await typeUsage.usedBy?.(types)
      return err({ code: 'type_in_use' as const, types, ...(instances !== undefined && { instances }) })
    },
  }
}

export type TypeCheck = ReturnType<typeof createTypeCheck>
