import type { ModuleRecord, NodeSetLoader, NodeSetRecord } from '../ports/index.js'

/** A node set as clients see it: the stored state plus whether this process loaded it. */
export interface NodeSetView {
  id: string
  name: string
  types: string[]
  enabled: boolean
  loaded: boolean
  module: string
  /** The owning module's version (clients print it for a node set). */
  version: string
  /** Why loading failed, when it did. */
  err?: string
}

/** The Node Module object. Never a filesystem path. */
export interface ModuleView {
  name: string
  version: string
  nodes: NodeSetView[]
}

type LoadState = { loaded: true } | { loaded: false; err: string }

/** The `err` of the sets of a module the store knows but discovery did not find. */
export const NOT_INSTALLED = 'not installed'

/**
 * This process's own state of the modules, beside the flags the store keeps: which modules are
 * installed here, which node sets it loaded (or why not), and the views that show both. With the
 * `store` inventory (fleet mode) every stored module counts as installed, an enabled set as loaded.
 */
export function createLocalState(loader: NodeSetLoader, inventory: 'discovered' | 'store' | undefined) {
  const loadState = new Map<string, LoadState>()
  /** The modules discovery (or an install) found on disk since start. */
  const found = new Set<string>()
  const everyStored = inventory === 'store'
  const installed = {
    has: (name: string) => everyStored || found.has(name),
    add: (name: string) => found.add(name),
    delete: (name: string) => found.delete(name),
    clear: () => found.clear(),
  }

  const viewOf = (set: NodeSetRecord, version: string): NodeSetView => {
    const state: LoadState | undefined = everyStored
      ? set.enabled
        ? { loaded: true }
        : undefined
      : installed.has(set.module)
        ? loadState.get(set.id)
        : { loaded: false, err: NOT_INSTALLED }
    const view: NodeSetView = {
      id: set.id,
      name: set.name,
      types: [...set.types],
      enabled: set.enabled,
      loaded: state?.loaded === true,
      module: set.module,
      version,
    }
    if (state !== undefined && !state.loaded) view.err = state.err
    return view
  }
  const moduleView = (module: ModuleRecord): ModuleView => ({
    name: module.name,
    version: module.version,
    nodes: module.sets.map((set) => viewOf(set, module.version)),
  })

  // Loads in progress by set id, so a set enabled here and announced by another instance at the
  // same moment is loaded once.
  const loading = new Map<string, Promise<void>>()
  const loadSet = (set: NodeSetRecord): Promise<void> => {
    let pending = loading.get(set.id)
    if (pending === undefined) {
      pending = loader
        .load({ id: set.id, module: set.module, name: set.name })
        .then((outcome) => {
          loadState.set(set.id, outcome.ok ? { loaded: true } : { loaded: false, err: outcome.message })
        })
        .finally(() => loading.delete(set.id))
      loading.set(set.id, pending)
    }
    return pending
  }

  /** Loads the enabled sets not loaded yet. A failed set is tried again on the next enable. */
  async function loadEnabled(module: ModuleRecord): Promise<void> {
    if (everyStored || !installed.has(module.name)) return
    for (const set of module.sets) {
      if (!set.enabled || loadState.get(set.id)?.loaded) continue
      await loadSet(set)
    }
  }

  const forgetLoads = (name: string) => {
    for (const key of [...loadState.keys()]) if (key.startsWith(`${name}/`)) loadState.delete(key)
  }

  return { installed, viewOf, moduleView, loadEnabled, forgetLoads }
}
