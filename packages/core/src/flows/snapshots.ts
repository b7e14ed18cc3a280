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

/** How long an instance's ask awaits its flows: 10 minutes. Polls no longer carry an older ask. */
export const ASK_LIFETIME_MS = 10 * 60 * 1000

/** The instance that sends its flows: its id, the client it authenticated as, and its address. */
export interface SnapshotSender {
  instance: string
  client: string
  address: string | null
}

/** A snapshot checked and measured, not yet kept. */
interface Prepared {
  name: string
  modules: SnapshotModule[]
  flowsText: string
  nodes: number
  bytes: number
  unknownTypes: string[]
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

  /** A snapshot checked and measured, ready to keep; or why it is refused. Keeps nothing. */
  async function prepare(upload: SnapshotUpload): Promise<Result<Prepared, SnapshotError>> {
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
    const nodes = flows.value.length
    return ok({ name: upload.name, modules, flowsText, nodes, bytes, unknownTypes: derived.unknownTypes })
  }

  /**
   * Keeps `prepared` as made by `createdBy` (`actor` in the trail; `sender` the instance that
   * sent the flows, as asked).
   */
  async function save(
    prepared: Prepared,
    createdBy: string | null,
    actor: Actor,
    sender: SnapshotSender | null,
  ): Promise<SnapshotMade> {
    const { flowsText, unknownTypes, ...rest } = prepared
    const meta = { id: base64url(deps.random.bytes(12)), ...rest, createdBy, createdAt: clock.now() }
    const version = await store.create({ ...meta, flows: flowsText })
    events.emit({
      type: 'fleet.snapshot_created',
      at: meta.createdAt,
      snapshot: meta.id,
      name: meta.name,
      version,
      nodes: meta.nodes,
      instance: sender?.instance ?? null,
      ...(sender !== null && { sender: { client: sender.client, address: sender.address } }),
      ...actor,
    })
    return { ...meta, version, unknownTypes }
  }

  /** The instance's ask, unless it is older than ASK_LIFETIME_MS: then it is dropped. */
  async function current(instance: string): Promise<SnapshotAsk | null> {
    const ask = await store.asked(instance)
    if (ask === null || clock.now() - ask.at < ASK_LIFETIME_MS) return ask
    await store.take(instance, ask.name)
    return null
  }

  /** The asker, who acts in the trail for the flows an instance sends; from no address of theirs. */
  const askerOf = (ask: SnapshotAsk): Actor => ({ username: ask.by, clientId: null, address: null })

  /** Writes `fleet.snapshot_refused`: the flows `sender` sent as `ask` asked were refused. */
  const refused = (ask: SnapshotAsk, sender: SnapshotSender, message: string) =>
    events.emit({
      type: 'fleet.snapshot_refused',
      at: clock.now(),
      instance: ask.instance,
      name: ask.name,
      message,
      sender: { client: sender.client, address: sender.address },
      ...askerOf(ask),
    })

  /** Why a snapshot was refused, as the trail says it. */
  const why = (error: SnapshotError) =>
    error.code === 'snapshot_too_large'
      ? `the snapshot's file would be ${error.bytes} bytes, more than fleet.snapshots.maxBytes (${error.limit})`
      : error.code === 'invalid_request'
        ? error.message
        : error.code

  return {
    /** The bound on a snapshot's file, in bytes. */
    maxBytes,

    /**
     * Makes a snapshot of `upload`: its flows checked, its modules as the upload names them or,
     * when it names none, those the fleet knows to provide its types. Audited as
     * `fleet.snapshot_created`.
     */
    create: async (
      principal: Principal,
      upload: SnapshotUpload,
      address: string | null,
    ): Promise<Result<SnapshotMade, SnapshotError>> => {
      const prepared = await prepare(upload)
      if (!prepared.ok) return prepared
      const by = principal.kind === 'user' ? principal.username : null
      return ok(await save(prepared.value, by, actorOf(principal, address), null))
    },

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

    /** The instance's ask, or null: its polls carry it. An ask lives ASK_LIFETIME_MS. */
    asked: current,

    /**
     * The flows `sender` runs, sent as it was asked: kept as a snapshot of the ask's name, made by
     * whoever asked. Checked before the ask is spent; refused flows spend it, and the refusal is
     * audited as `fleet.snapshot_refused`. A store that fails to keep them leaves the ask in place,
     * and is audited too. `snapshot_not_asked` when no ask of that name awaits.
     */
    async fromInstance(
      sender: SnapshotSender,
      upload: { name: string; flows: unknown },
    ): Promise<Result<SnapshotMade, SnapshotError>> {
      const { instance } = sender
      const notAsked = err({ code: 'snapshot_not_asked', instance, name: upload.name } as const)
      const ask = await current(instance)
      if (ask === null || ask.name !== upload.name) return notAsked
      const prepared = await prepare({ name: ask.name, flows: upload.flows })
      const taken = await store.take(instance, ask.name)
      if (taken === null) return notAsked
      if (!prepared.ok) {
        refused(taken, sender, why(prepared.error))
        return prepared
      }
      try {
        return ok(await save(prepared.value, taken.by, askerOf(taken), sender))
      } catch (error) {
        refused(taken, sender, 'the store did not keep the snapshot; the ask awaits the flows again')
        await store.ask(taken).catch(() => undefined)
        throw error
      }
    },

    /**
     * The flows `sender` sent were more than `limit` bytes, refused unread: its ask, if any, is
     * spent, audited as `fleet.snapshot_refused`.
     */
    async tooLarge(sender: SnapshotSender, limit: number): Promise<void> {
      const ask = await current(sender.instance)
      const taken = ask === null ? null : await store.take(sender.instance, ask.name)
      if (taken !== null)
        refused(taken, sender, `the flows sent were more than ${limit} bytes, the most a body may have`)
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
