import { type DomainError, err, ok, type Result } from '../errors.js'
import type {
  Actor,
  Clock,
  EventSink,
  ModuleDescriptor,
  ModuleRecord,
  ModuleStore,
  NodeSetLoader,
  NodeSetRecord,
  TypeUsage,
} from '../ports.js'

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

export type ModuleError = Extract<
  DomainError,
  { code: 'module_not_found' | 'node_set_not_found' | 'type_in_use' | 'flows_unavailable' }
>

export interface ModuleDeps {
  store: ModuleStore
  loader: NodeSetLoader
  typeUsage: TypeUsage
  events: EventSink
  clock: Clock
}

type LoadState = { loaded: true } | { loaded: false; err: string }

/**
 * The enablement state machine. `enabled` is persisted by the store; `loaded` is this process's
 * runtime state: a set is loaded once its files loaded, at sync if enabled or when enabled later.
 * Disabling never unloads (the code stays until restart).
 */
export function createModules({ store, loader, typeUsage, events, clock }: ModuleDeps) {
  const loadState = new Map<string, LoadState>()

  const viewOf = (set: NodeSetRecord, version: string): NodeSetView => {
    const state = loadState.get(set.id)
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
    for (const set of module.sets) {
      if (!set.enabled || loadState.get(set.id)?.loaded) continue
      await loadSet(set)
    }
  }

  /** Changes `enabled` of the named sets (every set when `only` is null), all or none. */
  async function setEnabled(
    name: string,
    only: string | null,
    enabled: boolean,
    actor: Actor,
  ): Promise<Result<ModuleRecord, ModuleError>> {
    const module = await store.find(name)
    if (module === null) return err({ code: 'module_not_found', module: name })
    const targets = only === null ? module.sets : module.sets.filter((set) => set.name === only)
    if (targets.length === 0) return err({ code: 'node_set_not_found', module: name, set: only ?? '' })

    const changing = targets.filter((set) => set.enabled !== enabled)
    if (changing.length === 0) return ok(module)

    if (!enabled) {
      const inUse = await typeUsage.typesInUse()
      if (inUse === null) return err({ code: 'flows_unavailable' })
      const blocked = [...new Set(changing.flatMap((set) => set.types.filter((type) => inUse.has(type))))]
      if (blocked.length > 0) return err({ code: 'type_in_use', types: blocked })
    }

    const names = changing.map((set) => set.name)
    const updated = await store.setEnabled(name, names, enabled)
    if (updated === null) return err({ code: 'module_not_found', module: name })
    if (enabled) await loadEnabled(updated)
    events.emit({
      type: enabled ? 'module.enabled' : 'module.disabled',
      at: clock.now(),
      module: name,
      sets: changing.map((set) => set.id),
      ...actor,
    })
    return ok(updated)
  }

  return {
    /**
     * Brings the inventory in line with what discovery found: records each module (new sets
     * start enabled), forgets modules no longer installed, and loads every enabled set. Modules
     * named in `keep` are installed but unreadable now (caught mid-install, say): their stored
     * state is kept, and they are not loaded.
     */
    async sync(
      discovered: readonly ModuleDescriptor[],
      options: { keep?: readonly string[] } = {},
    ): Promise<void> {
      const names = new Set([...discovered.map((module) => module.name), ...(options.keep ?? [])])
      for (const known of await store.list()) {
        if (!names.has(known.name)) await store.remove(known.name)
      }
      for (const descriptor of discovered) await loadEnabled(await store.upsert(descriptor))
    },

    /**
     * Loads the enabled sets this process has not loaded yet, of one module or (given null) of
     * every module: how an instance catches up with changes another instance sharing the store
     * made. Unknown modules are ignored.
     */
    async loadEnabled(name: string | null): Promise<void> {
      const modules = name === null ? await store.list() : [await store.find(name)]
      for (const module of modules) if (module !== null) await loadEnabled(module)
    },

    async list(): Promise<ModuleView[]> {
      return (await store.list()).map(moduleView)
    },

    async get(name: string): Promise<Result<ModuleView, ModuleError>> {
      const module = await store.find(name)
      return module === null ? err({ code: 'module_not_found', module: name }) : ok(moduleView(module))
    },

    async getNodeSet(name: string, set: string): Promise<Result<NodeSetView, ModuleError>> {
      const module = await store.find(name)
      if (module === null) return err({ code: 'module_not_found', module: name })
      const found = module.sets.find((candidate) => candidate.name === set)
      return found
        ? ok(viewOf(found, module.version))
        : err({ code: 'node_set_not_found', module: name, set })
    },

    /** Enables or disables every node set of a module, all or none. Setting the current state writes nothing. */
    async setModuleEnabled(
      name: string,
      enabled: boolean,
      actor: Actor,
    ): Promise<Result<ModuleView, ModuleError>> {
      const result = await setEnabled(name, null, enabled, actor)
      return result.ok ? ok(moduleView(result.value)) : result
    },

    /** Enables or disables one node set. */
    async setNodeSetEnabled(
      name: string,
      set: string,
      enabled: boolean,
      actor: Actor,
    ): Promise<Result<NodeSetView, ModuleError>> {
      const result = await setEnabled(name, set, enabled, actor)
      if (!result.ok) return result
      const updated = result.value.sets.find((candidate) => candidate.name === set)
      return updated
        ? ok(viewOf(updated, result.value.version))
        : err({ code: 'node_set_not_found', module: name, set })
    },
  }
}

export type Modules = ReturnType<typeof createModules>
