import { createKeyedQueue } from '../concurrency.js'
import { type DomainError, err, ok, type Result } from '../errors.js'
import type {
  Actor,
  Clock,
  EventSink,
  InstallRequest,
  ModuleDescriptor,
  ModuleInstaller,
  ModuleRecord,
  ModuleStore,
  NodeSetLoader,
  TypeUsage,
} from '../ports/index.js'
import { adopt, type ReportedModules } from './adopt.js'
import { createLocalState, type ModuleView, type NodeSetView } from './local-state.js'
import { createTypeCheck } from './type-check.js'

export type ModuleError = Extract<
  DomainError,
  { code: 'module_not_found' | 'node_set_not_found' | 'type_in_use' | 'flows_unavailable' }
>

export type PaletteError = Extract<
  DomainError,
  {
    code:
      | 'module_not_found'
      | 'type_in_use'
      | 'flows_unavailable'
      | 'invalid_module_spec'
      | 'module_not_allowed'
      | 'install_failed'
      | 'install_timeout'
      | 'busy'
  }
>

export interface ModuleDeps {
  store: ModuleStore
  loader: NodeSetLoader
  typeUsage: TypeUsage
  events: EventSink
  clock: Clock
  /** Installs and removes modules; without it, every install is refused as not allowed. */
  installer?: ModuleInstaller | undefined
  /**
   * 'discovered' (default): a module counts as installed once discovery or an install found it.
   * 'store': every module the store knows counts as installed (a fleet's desired modules, which
   * the instances install), and an enabled set counts as loaded.
   */
  inventory?: 'discovered' | 'store' | undefined
  /**
   * Modules known only by report (fleet mode): listed and shown beside the stored ones; enabling
   * or disabling one is an operator's decision that stores it (see adopt); removing one records
   * its removal.
   */
  reported?: ReportedModules | undefined
}

/**
 * The enablement state machine. `enabled` is persisted by the store; `loaded` is this process's
 * runtime state: a set is loaded once its files loaded, at sync if enabled or when enabled later.
 * Disabling never unloads (the code stays until restart). Changes to one module are applied one
 * after another, in the order they arrive, whatever the store does with concurrent writes.
 * Discovery never makes the store forget a module: one that is not installed now keeps its
 * stored state, is shown with `loaded: false` and `err: "not installed"`, and only `forget`
 * (or removal) drops it.
 */
export function createModules(deps: ModuleDeps) {
  const { store, loader, typeUsage, events, clock, installer, inventory, reported } = deps
  const { installed, viewOf, moduleView, loadEnabled, forgetLoads } = createLocalState(loader, inventory)
  const serial = createKeyedQueue()
  const check = createTypeCheck(typeUsage)
  const { blockedTypes, inUse } = check
  /** The stored module, else the one known by report, else null. */
  const findAny = async (name: string) => (await store.find(name)) ?? (await reported?.find(name)) ?? null

  /** Changes `enabled` of the named sets (every set when `only` is null), all or none. */
  async function setEnabled(
    name: string,
    only: string | null,
    enabled: boolean,
    actor: Actor,
  ): Promise<Result<ModuleRecord, ModuleError>> {
    const module = await store.find(name)
    if (module === null) {
      const known = await reported?.find(name)
      if (known === undefined || known === null) return err({ code: 'module_not_found', module: name })
      return adopt({ store, events, clock, check }, known, only, enabled, actor)
    }
    const targets = only === null ? module.sets : module.sets.filter((set) => set.name === only)
    if (targets.length === 0) return err({ code: 'node_set_not_found', module: name, set: only ?? '' })

    const changing = targets.filter((set) => set.enabled !== enabled)
    if (changing.length === 0) return ok(module)

    if (!enabled) {
      const blocked = await blockedTypes(changing.flatMap((set) => set.types))
      if (!blocked.ok) return blocked
      if (blocked.value.length > 0) return inUse(blocked.value)
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
     * Records what discovery found installed (new modules and sets start enabled, known ones keep
     * their flags) and loads every enabled set. Modules the store knows but discovery did not
     * find keep their stored state: they are shown as not installed until they are back.
     */
    async sync(discovered: readonly ModuleDescriptor[]): Promise<void> {
      installed.clear()
      for (const descriptor of discovered) installed.add(descriptor.name)
      // Every module recorded at once (a store that commits concurrent changes together makes them
      // durable with one sync of its log at start, not one a module), then their sets loaded in
      // the order discovery found them, whatever order the store answered in. A module the store
      // could not record is not loaded; the others are, and the first failure is then thrown.
      const recorded = await Promise.allSettled(
        discovered.map((descriptor) => serial.run(descriptor.name, () => store.upsert(descriptor))),
      )
      for (const outcome of recorded) {
        if (outcome.status === 'fulfilled') {
          const module = outcome.value
          await serial.run(module.name, () => loadEnabled(module))
        }
      }
      const failed = recorded.find((outcome) => outcome.status === 'rejected')
      if (failed !== undefined) throw failed.reason
    },

    /**
     * Forgets a module's stored state (the operator's escape hatch for a module gone for good);
     * true when the store had it. Its sets start enabled if it is discovered again.
     */
    forget(name: string): Promise<boolean> {
      return serial.run(name, async () => {
        forgetLoads(name)
        return store.remove(name)
      })
    },

    /**
     * Installs a module and loads its enabled sets. A module new to the store starts enabled; one
     * it knows (installed again, or back after it was not installed) keeps its stored flags.
     */
    install(request: InstallRequest, actor: Actor): Promise<Result<ModuleView, PaletteError>> {
      // An upload's module is known only once it is unpacked: its record waits for that module.
      return serial.run(request.module ?? '', async () => {
        if (installer === undefined) {
          return err({ code: 'module_not_allowed', message: 'This service does not install modules' })
        }
        const outcome = await installer.install(request)
        if (!outcome.ok) return err(outcome.error)
        const { module } = outcome
        const record = async () => {
          installed.add(module.name)
          // New files: whatever was loaded before counts no more.
          forgetLoads(module.name)
          const stored = await store.upsert(module)
          await loadEnabled(stored)
          events.emit({
            type: 'module.installed',
            at: clock.now(),
            module: module.name,
            version: module.version,
            ...actor,
          })
          return ok(moduleView(stored))
        }
        return request.module === undefined ? serial.run(module.name, record) : record()
      })
    },

    /**
     * Uninstalls a module and forgets its stored state: the only way, besides `forget`, that a
     * module leaves the store. Refused while the deployed flows use any of its types.
     */
    remove(name: string, actor: Actor): Promise<Result<void, PaletteError>> {
      return serial.run(name, async () => {
        const module = await findAny(name)
        if (module === null) return err({ code: 'module_not_found', module: name })
        const blocked = await blockedTypes(module.sets.flatMap((set) => set.types))
        if (!blocked.ok) return blocked
        if (blocked.value.length > 0) return inUse(blocked.value)
        if (installed.has(name)) {
          if (installer === undefined) {
            return err({ code: 'module_not_allowed', message: 'This service does not remove modules' })
          }
          const outcome = await installer.remove(name)
          if (!outcome.ok) return err(outcome.error)
        }
        installed.delete(name)
        forgetLoads(name)
        await store.remove(name)
        events.emit({
          type: 'module.removed',
          at: clock.now(),
          module: name,
          version: module.version,
          ...actor,
        })
        return ok(undefined)
      })
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

    /** Every module, sorted by name: the stored ones, and those known by report. */
    async list(): Promise<ModuleView[]> {
      const stored = await store.list()
      if (reported === undefined) return stored.map(moduleView)
      const names = new Set(stored.map((module) => module.name))
      const all = [...stored, ...(await reported.list()).filter((module) => !names.has(module.name))]
      return all.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map(moduleView)
    },

    async get(name: string): Promise<Result<ModuleView, ModuleError>> {
      const module = await findAny(name)
      return module === null ? err({ code: 'module_not_found', module: name }) : ok(moduleView(module))
    },

    async getNodeSet(name: string, set: string): Promise<Result<NodeSetView, ModuleError>> {
      const module = await findAny(name)
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
      const result = await serial.run(name, () => setEnabled(name, null, enabled, actor))
      return result.ok ? ok(moduleView(result.value)) : result
    },

    /** Enables or disables one node set. */
    async setNodeSetEnabled(
      name: string,
      set: string,
      enabled: boolean,
      actor: Actor,
    ): Promise<Result<NodeSetView, ModuleError>> {
      const result = await serial.run(name, () => setEnabled(name, set, enabled, actor))
      if (!result.ok) return result
      const updated = result.value.sets.find((candidate) => candidate.name === set)
      return updated
        ? ok(viewOf(updated, result.value.version))
        : err({ code: 'node_set_not_found', module: name, set })
    },
  }
}

export type Modules = ReturnType<typeof createModules>
