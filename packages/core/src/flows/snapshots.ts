// Snapshots of flows: made from an upload (Node-RED's flow JSON under a name), kept immutable as the
// next version of that name with the node modules its types need, listed, read back as a file and
// compared node by node.
import { actorOf, type Principal } from '../auth/principal.js'
import { type DomainError, err, invalid, ok, type Result } from '../errors.js'
import type {
  Actor,
  Clock,
  EventSink,
  FleetStore,
  ModuleStore,
  RandomSource,
  SnapshotAsk,
  SnapshotMeta,
  SnapshotModule,
  SnapshotStore,
} from '../ports/index.js'
import { base64url } from '../tokens/encoding.js'
import { diffFlows, type FlowsDiff } from './flow-diff.js'
import {
  byteLength,
  checkFlows,
  checkModules,
  type FlowNode,
  type KnownModule,
  modulesForTypes,
  moduleTypesOf,
  SNAPSHOT_NAME_FORM,
  SNAPSHOT_NAME_RULE,
  snapshotFile,
} from './flow-rules.js'

/** Node-RED's own bound on a request body (`apiMaxLength`, 5 MB), the default bound of a snapshot. */
export const DEFAULT_SNAPSHOT_MAX_BYTES = 5 * 1024 * 1024

/** What an upload holds: a name, Node-RED's flow JSON, and the modules when the file names them. */
export interface SnapshotUpload {
  name: string
  flows: unknown
  modules?: unknown
}

/** A snapshot just made, and the types of its flows that no module the fleet knows provides. */
export type SnapshotMade = SnapshotMeta & { unknownTypes: string[] }

export type SnapshotError = Extract<
  DomainError,
  { code: 'invalid_request' | 'snapshot_too_large' | 'snapshot_not_found' | 'snapshot_not_asked' }
>

export interface SnapshotDeps {
  store: SnapshotStore
  /** The fleet's decided modules: the first say on which module provides a type. */
  modules: ModuleStore
  /** The instances' reports: the modules installed there, for types the decided modules lack. */
  fleet: FleetStore
  clock: Clock
  random: RandomSource
  events: EventSink
  /** The most bytes a snapshot's file may have. */
  maxBytes: number
  /** Why a module's version is not one an install takes, or null (see CorePorts.versionProblem). */
  versionProblem?: ((version: string) => string | null) | undefined
}

/** What a snapshot's id looks like: 12 random bytes in base64url. */
export const SNAPSHOT_ID_FORM = /^[A-Za-z0-9_-]{16}$/

/** The snapshot of `id`; null for an id not of SNAPSHOT_ID_FORM, which the store is never asked about. */
const findIn = (store: SnapshotStore, id: string) => (SNAPSHOT_ID_FORM.test(id) ? store.find(id) : null)

const notFound = (id: string): Result<never, SnapshotError> => err({ code: 'snapshot_not_found', id })

export function createSnapshots(deps: SnapshotDeps) {
  const { store, clock, events, maxBytes } = deps
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) {
    throw new RangeError('fleet.snapshots.maxBytes must be a positive whole number of bytes')
  }

  /** What the fleet knows of modules and their types: the decided modules, then those reported. */
  async function knownModules(): Promise<KnownModule[]> {
    const decided = (await deps.modules.list()).map((module) => ({
      name: module.name,
      version: module.version,
      types: module.sets.flatMap((set) => set.types),
    }))
    const ids = (await deps.fleet.digests()).map((digest) => digest.id)
    const reported = (await deps.fleet.reports(ids)).flatMap((record) =>
      (record.report?.modules ?? []).map((module) => ({
        name: module.name,
        version: module.version,
        types: module.sets.flatMap((set) => set.types),
      })),
    )
    return [...decided, ...reported]
  }

  /** The flows of a stored snapshot. */
  const flowsOf = (text: string) => JSON.parse(text) as FlowNode[]

  /**
   * Makes a snapshot of `upload`, made by `createdBy` (`actor` in the trail; `instance` when the
   * flows are the ones it sent).
   */
  async function make(
    upload: SnapshotUpload,
    createdBy: string | null,
    actor: Actor,
    instance?: string,
  ): Promise<Result<SnapshotMade, SnapshotError>> {
    if (!SNAPSHOT_NAME_FORM.test(upload.name)) return err(invalid(`name: ${SNAPSHOT_NAME_RULE}`))
    const flows = checkFlows(upload.flows)
    if (!flows.ok) return err(invalid(flows.error))
    const given = upload.modules === undefined ? null : checkModules(upload.modules, deps.versionProblem)
    if (given !== null && !given.ok) return err(invalid(given.error))
    const derived = modulesForTypes(moduleTypesOf(flows.value), await knownModules())
    const modules: SnapshotModule[] = given === null ? derived.modules : given.value
    const flowsText = JSON.stringify(flows.value)
    const bytes = byteLength(snapshotFile(upload.name, modules, flowsText))
    if (bytes > maxBytes) return err({ code: 'snapshot_too_large', bytes, limit: maxBytes })
    const meta = {
      id: base64url(deps.random.bytes(12)),
      name: upload.name,
      modules,
      nodes: flows.value.length,
      bytes,
      createdBy,
      createdAt: clock.now(),
    }
    const version = await store.create({ ...meta, flows: flowsText })
    events.emit({
      type: 'fleet.snapshot_created',
      at: meta.createdAt,
      snapshot: meta.id,
      name: meta.name,
      version,
      nodes: meta.nodes,
      instance: instance ?? null,
      ...actor,
    })
    return ok({ ...meta, version, unknownTypes: derived.unknownTypes })
  }

  return {
    /** The bound on a snapshot's file, in bytes. */
    maxBytes,

    /**
     * Makes a snapshot of `upload`: its flows checked, its modules as the upload names them or,
     * when it names none, those the fleet knows to provide its types. Audited as
     * `fleet.snapshot_created`.
     */
    create: (
      principal: Principal,
      upload: SnapshotUpload,
      address: string | null,
    ): Promise<Result<SnapshotMade, SnapshotError>> =>
      make(upload, principal.kind === 'user' ? principal.username : null, actorOf(principal, address)),

    /**
     * Asks `instance` to send the flows it runs, to be kept as a snapshot of `name` by whoever
     * asked (see fromInstance); replaces its earlier ask. Null when the fleet knows no such
     * instance. Audited as `fleet.snapshot_asked`.
     */
    async ask(
      principal: Principal,
      instance: string,
      name: string,
      address: string | null,
    ): Promise<Result<SnapshotAsk | null, SnapshotError>> {
      if (!SNAPSHOT_NAME_FORM.test(name)) return err(invalid(`name: ${SNAPSHOT_NAME_RULE}`))
      if ((await deps.fleet.find(instance)) === null) return ok(null)
      const ask = {
        instance,
        name,
        by: principal.kind === 'user' ? principal.username : null,
        at: clock.now(),
      }
      await store.ask(ask)
      events.emit({
        type: 'fleet.snapshot_asked',
        at: ask.at,
        instance,
        name,
        ...actorOf(principal, address),
      })
      return ok(ask)
    },

    /** The instance's ask, or null: its polls carry it. */
    asked: (instance: string): Promise<SnapshotAsk | null> => store.asked(instance),

    /**
     * The flows `instance` runs, sent as it was asked: kept as a snapshot of the ask's name, made
     * by whoever asked. The ask is spent either way; a refusal is audited as
     * `fleet.snapshot_refused`. `snapshot_not_asked` when no ask of that name awaits.
     */
    async fromInstance(
      instance: string,
      upload: { name: string; flows: unknown },
      address: string | null,
    ): Promise<Result<SnapshotMade, SnapshotError>> {
      const ask = await store.take(instance, upload.name)
      if (ask === null) return err({ code: 'snapshot_not_asked', instance, name: upload.name })
      const actor = { username: ask.by, clientId: null, address }
      const made = await make({ name: ask.name, flows: upload.flows }, ask.by, actor, instance)
      if (!made.ok) {
        const { error } = made
        events.emit({
          type: 'fleet.snapshot_refused',
          at: clock.now(),
          instance,
          name: ask.name,
          message:
            error.code === 'snapshot_too_large'
              ? `the snapshot's file would be ${error.bytes} bytes, more than fleet.snapshots.maxBytes (${error.limit})`
              : error.code === 'invalid_request'
                ? error.message
                : error.code,
          ...actor,
        })
      }
      return made
    },

    /** Every snapshot without its flows, by name, then version. */
    list: (): Promise<SnapshotMeta[]> => store.list(),

    /** The snapshot and its file (what an upload takes), or `snapshot_not_found`. */
    async file(id: string): Promise<Result<{ meta: SnapshotMeta; file: string }, SnapshotError>> {
      const found = await findIn(store, id)
      if (found === null) return notFound(id)
      const { flows, ...meta } = found
      return ok({ meta, file: snapshotFile(meta.name, meta.modules, flows) })
    },

    /** The nodes added, removed and changed from snapshot `id` to snapshot `against`. */
    async diff(id: string, against: string): Promise<Result<FlowsDiff, SnapshotError>> {
      const [before, after] = await Promise.all([findIn(store, id), findIn(store, against)])
      if (before === null) return notFound(id)
      if (after === null) return notFound(against)
      return ok(diffFlows(flowsOf(before.flows), flowsOf(after.flows)))
    },
  }
}

export type Snapshots = ReturnType<typeof createSnapshots>
