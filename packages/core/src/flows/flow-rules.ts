// What makes a set of flows a snapshot's: Node-RED's flow JSON (an array of objects, each with a
// string `id` and `type`; tabs, subflows, groups and config nodes among them), a name, and the node
// modules its types need.
import { err, ok, type Result } from '../errors.js'
import type { SnapshotModule } from '../ports/index.js'

/** A node of Node-RED's flow JSON: any object with a string id and type. */
export type FlowNode = { id: string; type: string; z?: string } & Record<string, unknown>

/**
 * The types Node-RED 4 itself provides (its `node-red` module, and the editor's own tabs,
 * subflows, groups and junctions): they need no node module. A subflow's instances
 * (`subflow:<id>`) need none either: the subflow travels in the same flows.
 */
export const CORE_TYPES: ReadonlySet<string> = new Set([
  'tab',
  'subflow',
  'group',
  'junction',
  'comment',
  'unknown',
  'global-config',
  'inject',
  'debug',
  'complete',
  'catch',
  'status',
  'link in',
  'link out',
  'link call',
  'function',
  'switch',
  'change',
  'range',
  'template',
  'delay',
  'trigger',
  'exec',
  'rbe',
  'split',
  'join',
  'sort',
  'batch',
  'csv',
  'html',
  'json',
  'xml',
  'yaml',
  'file',
  'file in',
  'watch',
  'mqtt in',
  'mqtt out',
  'mqtt-broker',
  'http in',
  'http response',
  'http request',
  'http proxy',
  'tls-config',
  'websocket in',
  'websocket out',
  'websocket-listener',
  'websocket-client',
  'tcp in',
  'tcp out',
  'tcp request',
  'udp in',
  'udp out',
])

const SUBFLOW_INSTANCE = 'subflow:'

/** A snapshot's name: 1 to 64 letters, digits, `.`, `_` or `-`, starting with a letter or digit. */
export const SNAPSHOT_NAME_FORM = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
export const SNAPSHOT_NAME_RULE = '1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit'

/** A module name as npm allows it (a scope, then a name), and a version of at most 64 characters. */
const MODULE_NAME = /^(@[a-z0-9][a-z0-9._~-]*\/)?[a-z0-9][a-z0-9._~-]*$/
const MAX_MODULE_NAME = 214
const MAX_VERSION = 64

/** The most levels of arrays and objects a node may hold, the node itself the first. */
export const MAX_NODE_DEPTH = 512

/** Whether `node` holds arrays and objects more than `limit` levels deep; walked without recursion. */
function deeperThan(node: unknown, limit: number): boolean {
  const pending: Array<[unknown, number]> = [[node, 1]]
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [value, depth] = next
    if (typeof value !== 'object' || value === null) continue
    if (depth > limit) return true
    for (const item of Array.isArray(value) ? value : Object.values(value)) pending.push([item, depth + 1])
  }
  return false
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const quoted = (text: string) => JSON.stringify(text.length > 64 ? `${text.slice(0, 64)}…` : text)

/**
 * The flows when `value` is Node-RED's flow JSON whose references hold within it: every node's
 * `z` names one of its tabs or subflows, every `subflow:<id>` one of its subflows; no node holds
 * `credentials`, nor nests deeper than MAX_NODE_DEPTH. Otherwise the
 * first problem, naming the node (`flows[3]`, with its id when it has one).
 */
export function checkFlows(value: unknown): Result<FlowNode[], string> {
  if (!Array.isArray(value)) return err('flows: must be an array of nodes (Node-RED’s flow JSON)')
  const seen = new Map<string, number>()
  const containers = new Set<string>()
  const subflows = new Set<string>()
  for (const [index, node] of value.entries()) {
    const at = `flows[${index}]`
    if (!isObject(node)) return err(`${at}: must be an object`)
    if (typeof node.id !== 'string' || node.id === '') return err(`${at}: id must be a non-empty string`)
    const named = `${at} (id ${quoted(node.id)})`
    if (typeof node.type !== 'string' || node.type === '')
      return err(`${named}: type must be a non-empty string`)
    if (Object.hasOwn(node, 'credentials'))
      return err(
        `${named}: holds credentials; credentials never travel in a snapshot (each instance keeps its own): remove the node's "credentials"`,
      )
    if (deeperThan(node, MAX_NODE_DEPTH))
      return err(`${named}: nests arrays and objects more than ${MAX_NODE_DEPTH} levels deep`)
    const before = seen.get(node.id)
    if (before !== undefined) return err(`${named}: the id of flows[${before}] too; ids must be unique`)
    seen.set(node.id, index)
    if (node.type === 'tab' || node.type === 'subflow') containers.add(node.id)
    if (node.type === 'subflow') subflows.add(node.id)
  }
  for (const [index, node] of (value as FlowNode[]).entries()) {
    const named = `flows[${index}] (id ${quoted(node.id)})`
    if (node.z !== undefined && node.z !== '') {
      if (typeof node.z !== 'string') return err(`${named}: z must be a string`)
      if (!containers.has(node.z))
        return err(`${named}: z names ${quoted(node.z)}, no tab or subflow of these flows`)
    }
    if (node.type.startsWith(SUBFLOW_INSTANCE) && !subflows.has(node.type.slice(SUBFLOW_INSTANCE.length)))
      return err(`${named}: type ${quoted(node.type)} names no subflow of these flows`)
  }
  return ok(value as FlowNode[])
}

/**
 * The modules an upload names, sorted by name; or the first problem. `versionProblem` says why a
 * version is not one an install takes.
 */
export function checkModules(
  value: unknown,
  versionProblem: (version: string) => string | null = () => null,
): Result<SnapshotModule[], string> {
  if (!Array.isArray(value)) return err('modules: must be an array of {name, version}')
  const byName = new Map<string, SnapshotModule>()
  for (const [index, entry] of value.entries()) {
    const at = `modules[${index}]`
    if (!isObject(entry)) return err(`${at}: must be an object {name, version}`)
    const { name, version } = entry
    if (typeof name !== 'string' || name.length > MAX_MODULE_NAME || !MODULE_NAME.test(name))
      return err(`${at}: name must be a node module's name`)
    if (typeof version !== 'string' || version === '' || version.length > MAX_VERSION)
      return err(`${at}: version must be 1 to ${MAX_VERSION} characters`)
    const problem = versionProblem(version)
    if (problem !== null) return err(`${at}: ${problem}`)
    if (byName.has(name)) return err(`${at}: ${name} is listed twice`)
    byName.set(name, { name, version })
  }
  return ok(sortModules([...byName.values()]))
}

const sortModules = (modules: SnapshotModule[]) =>
  modules.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))

/** The types of `flows` a node module must provide: neither Node-RED's own nor a subflow's. Sorted. */
export function moduleTypesOf(flows: readonly FlowNode[]): string[] {
  const types = new Set<string>()
  for (const { type } of flows) {
    if (!CORE_TYPES.has(type) && !type.startsWith(SUBFLOW_INSTANCE)) types.add(type)
  }
  return [...types].sort()
}

/** A module the fleet knows, with the types its node sets provide. */
export interface KnownModule {
  name: string
  version: string
  types: readonly string[]
}

/**
 * The modules that provide `types`, as `known` says (the first module listing a type provides
 * it, at the version of the first entry of its name), and the types no known module provides.
 */
export function modulesForTypes(
  types: readonly string[],
  known: readonly KnownModule[],
): { modules: SnapshotModule[]; unknownTypes: string[] } {
  const provider = new Map<string, KnownModule>()
  for (const module of known) {
    for (const type of module.types) if (!provider.has(type)) provider.set(type, module)
  }
  const modules = new Map<string, SnapshotModule>()
  const unknownTypes: string[] = []
  for (const type of types) {
    const module = provider.get(type)
    if (module === undefined) unknownTypes.push(type)
    else if (!modules.has(module.name)) {
      const first = known.find((each) => each.name === module.name) ?? module
      modules.set(module.name, { name: module.name, version: first.version })
    }
  }
  return { modules: sortModules([...modules.values()]), unknownTypes }
}

/**
 * A snapshot's file, as a download gives it and an upload takes it: `{name, modules, flows}`,
 * one module and one node a line (so that a diff of two files shows the nodes that changed), each
 * node's keys in the order they came.
 */
export function snapshotFile(name: string, modules: readonly SnapshotModule[], flowsText: string): string {
  const flows = JSON.parse(flowsText) as unknown[]
  const list = (items: readonly unknown[]) =>
    items.length === 0 ? '[]' : `[\n${items.map((item) => `    ${JSON.stringify(item)}`).join(',\n')}\n  ]`
  return `{\n  "name": ${JSON.stringify(name)},\n  "modules": ${list(modules)},\n  "flows": ${list(flows)}\n}\n`
}

/**
 * The size of `text` in UTF-8, in bytes: a code unit below 0x80 takes one byte, below 0x800 two,
 * a surrogate pair four, any other three (a lone surrogate too: it is written as U+FFFD).
 */
export function byteLength(text: string): number {
  let bytes = 0
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i)
    if (unit < 0x80) bytes += 1
    else if (unit < 0x800) bytes += 2
    else if (unit >= 0xd800 && unit <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1)
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4
        i++
      } else bytes += 3
    } else bytes += 3
  }
  return bytes
}
