/**
 * The audience of a token for flowadmin's own API. Every other audience is one resource server's
 * id (a resource server may not be called `flowadmin`).
 */
export const FLOWADMIN_AUDIENCE = 'flowadmin'

/**
 * The configured resource servers' ids now: each is the audience of its tokens. Throws for a
 * server called `flowadmin`, at the start as at each `set` (a reload).
 */
export function createAudiences(servers: readonly { id: string }[]) {
  let ids = new Set<string>()
  const set = (list: readonly { id: string }[]) => {
    if (list.some((server) => server.id === FLOWADMIN_AUDIENCE))
      throw new RangeError(
        `A resource server may not be called ${FLOWADMIN_AUDIENCE}: that is flowadmin's own audience`,
      )
    ids = new Set(list.map((server) => server.id))
  }
  set(servers)
  return {
    set,
    /** Whether `id` is a configured resource server's, now. */
    isResourceServer: (id: string) => ids.has(id),
  }
}

export type Audiences = ReturnType<typeof createAudiences>
