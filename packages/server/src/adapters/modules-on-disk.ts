import { execFile } from 'node:child_process'
import { readdir, readFile, stat } from 'node:fs/promises'
import * as path from 'node:path'
import { Script } from 'node:vm'
import type { LoadOutcome, ModuleDescriptor, NodeSetLoader } from '@flowadmin/core'

// Node modules are found and parsed, never run: flowadmin administers them, the runtime runs them.

/** The package.json keys whose `nodes` map declares node sets: the ecosystem's and our own. */
export const MANIFEST_KEYS = ['node-red', 'flowadmin'] as const

/** A node set found on disk, with the files the loader reads. */
export interface DiscoveredSet {
  name: string
  types: string[]
  /** Absolute path of the set's JavaScript file. */
  js: string
  /** Absolute path of the HTML file beside it (same base name). */
  html: string
  /** Whether the JavaScript is an ES module (`.mjs`, or `.js` in a `"type": "module"` package). */
  esm: boolean
}

export interface DiscoveredModule {
  name: string
  version: string
  /** Absolute path of the package folder. */
  dir: string
  sets: DiscoveredSet[]
}

/** What discovery reports besides the modules: packages skipped, one line each. */
export type Warn = (message: string) => void

/** The descriptors the core records, from what discovery found. */
export function toDescriptors(modules: readonly DiscoveredModule[]): ModuleDescriptor[] {
  return modules.map((module) => ({
    name: module.name,
    version: module.version,
    sets: module.sets.map((set) => ({ name: set.name, types: [...set.types] })),
  }))
}

/**
 * Finds the node modules installed in `<userDir>/node_modules`, scoped ones too, sorted by name.
 * Never throws for a broken package: it is skipped with a warning, or its set is kept with no
 * types and fails to load. A package whose package.json cannot be read is also told to
 * `onUnreadable` by its folder name (its package name, by npm's layout): it may be a node module
 * caught mid-install, whose stored state must not be forgotten.
 */
export async function discoverModules(
  userDir: string,
  warn: Warn = () => {},
  onUnreadable: (name: string) => void = () => {},
): Promise<DiscoveredModule[]> {
  const root = path.join(userDir, 'node_modules')
  const found = new Map<string, DiscoveredModule>()
  for (const dir of await packageDirs(root)) {
    const label = path.relative(root, dir).split(path.sep).join('/')
    const module = await readPackage(dir, label, warn)
    if (module === UNREADABLE) onUnreadable(label)
    if (module === null || module === UNREADABLE) continue
    if (found.has(module.name)) {
      warn(`skipped ${path.relative(root, dir)}: another folder already provides ${module.name}`)
      continue
    }
    found.set(module.name, module)
  }
  return [...found.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

async function subfolders(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => [])
  const folders: string[] = []
  for (const entry of entries) {
    if (entry.name.startsWith('.')) continue
    const full = path.join(dir, entry.name)
    // Symbolic links count when they lead to a folder (linked and workspace installs).
    if (
      entry.isDirectory() ||
      (entry.isSymbolicLink() && (await stat(full).catch(() => null))?.isDirectory())
    ) {
      folders.push(full)
    }
  }
  return folders.sort()
}

async function packageDirs(root: string): Promise<string[]> {
  const dirs: string[] = []
  for (const dir of await subfolders(root)) {
    if (path.basename(dir).startsWith('@')) dirs.push(...(await subfolders(dir)))
    else dirs.push(dir)
  }
  return dirs
}

type Manifest = { nodes?: unknown }

/** What readPackage answers for a package.json that exists but cannot be read or parsed. */
const UNREADABLE = Symbol('unreadable')

/** `label` names the package folder in warnings, relative to node_modules. */
async function readPackage(
  dir: string,
  label: string,
  warn: Warn,
): Promise<DiscoveredModule | null | typeof UNREADABLE> {
  let pkg: Record<string, unknown>
  try {
    const parsed: unknown = JSON.parse(await readFile(path.join(dir, 'package.json'), 'utf8'))
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error('not an object')
    pkg = parsed as Record<string, unknown>
  } catch (error) {
    // A folder without package.json is not a package at all; anything else is a broken one.
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null
    warn(`skipped ${label}: package.json is unreadable (${(error as Error).message})`)
    return UNREADABLE
  }

  const key = MANIFEST_KEYS.find(
    (candidate) => isObject(pkg[candidate]) && (pkg[candidate] as Manifest).nodes,
  )
  if (key === undefined) return null
  const nodes = (pkg[key] as Manifest).nodes
  if (!isObject(nodes)) {
    warn(`skipped ${label}: "${key}.nodes" must map set names to files`)
    return null
  }
  if (typeof pkg.name !== 'string' || pkg.name === '') {
    warn(`skipped ${label}: package.json has no name`)
    return null
  }
  const name = pkg.name
  const version = typeof pkg.version === 'string' ? pkg.version : '0.0.0'
  const esmPackage = pkg.type === 'module'

  const sets: DiscoveredSet[] = []
  for (const [setName, file] of Object.entries(nodes)) {
    if (setName === '' || setName.includes('/')) {
      warn(`skipped node set "${setName}" of ${name}: a set name must be non-empty and without "/"`)
      continue
    }
    if (typeof file !== 'string' || file === '') {
      warn(`skipped node set "${setName}" of ${name}: its file must be a path`)
      continue
    }
    const js = path.resolve(dir, file)
    if (!isInside(dir, js)) {
      warn(`skipped node set "${setName}" of ${name}: its file lies outside the package`)
      continue
    }
    const html = path.join(path.dirname(js), `${path.basename(js, path.extname(js))}.html`)
    const extension = path.extname(js)
    sets.push({
      name: setName,
      types: typesOf(await readFile(html, 'utf8').catch(() => '')),
      js,
      html,
      esm: extension === '.mjs' || (extension !== '.cjs' && esmPackage),
    })
  }
  return { name, version, dir, sets }
}

const TEMPLATE = /<script\b[^>]*?\sdata-template-name\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s"'=<>`]+))[^>]*>/gi

/** The node types an HTML file declares: each `<script ... data-template-name="T">`, in order. */
export function typesOf(html: string): string[] {
  const types = new Set<string>()
  for (const match of html.matchAll(TEMPLATE)) {
    const type = (match[1] ?? match[2] ?? match[3] ?? '').trim()
    if (type !== '') types.add(type)
  }
  return [...types]
}

/**
 * The loader: reads a set's HTML and JavaScript and compiles the JavaScript without running it.
 * Messages name files by their base name only, never a path on this machine. `update` replaces
 * the modules it knows (after an install or removal).
 */
export function createDiskLoader(
  modules: readonly DiscoveredModule[],
): NodeSetLoader & { update(modules: readonly DiscoveredModule[]): void } {
  const sets = new Map<string, DiscoveredSet>()
  const update = (next: readonly DiscoveredModule[]) => {
    sets.clear()
    for (const module of next) for (const set of module.sets) sets.set(`${module.name}/${set.name}`, set)
  }
  update(modules)

  return {
    update,
    async load(ref): Promise<LoadOutcome> {
      const set = sets.get(ref.id)
      if (set === undefined) return { ok: false, message: 'Node set files not found' }
      const js = path.basename(set.js)
      const html = path.basename(set.html)
      const htmlSource = await readFile(set.html, 'utf8').catch(() => null)
      if (htmlSource === null) return { ok: false, message: `Cannot read ${html}` }
      const source = await readFile(set.js, 'utf8').catch(() => null)
      if (source === null) return { ok: false, message: `Cannot read ${js}` }
      const problem = set.esm ? await checkModuleSyntax(set.js) : checkScriptSyntax(source, js)
      return problem === null ? { ok: true } : { ok: false, message: `${js}: ${withoutPaths(problem)}` }
    },
  }
}

/** Compiles CommonJS source as Node wraps it, without running it; the syntax error or null. */
function checkScriptSyntax(source: string, filename: string): string | null {
  try {
    // The same wrapper CommonJS uses, so top-level `return` parses as it does in a module.
    const body = source.startsWith('#!') ? `//${source.slice(2)}` : source
    new Script(`(function (exports, require, module, __filename, __dirname) {${body}\n})`, { filename })
    return null
  } catch (error) {
    return error instanceof Error ? `${error.name}: ${error.message}` : 'cannot be compiled'
  }
}

/**
 * ES modules cannot be compiled by `vm` without an experimental flag; `node --check` parses the
 * file without running or resolving it.
 */
function checkModuleSyntax(file: string): Promise<string | null> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--check', file], { timeout: 10_000 }, (error, _stdout, stderr) => {
      if (error === null) return resolve(null)
      const line = String(stderr)
        .split('\n')
        .find((candidate) => /^\w*Error\b/.test(candidate))
      resolve(line?.trim() ?? 'cannot be compiled')
    })
  })
}

/**
 * A load error as clients may see it: every absolute path in it (a file the compiler names, say)
 * shortened to its last part, so no response shows where the server keeps its files.
 */
export function withoutPaths(message: string): string {
  return message.replace(/(?<=^|[\s'"`(])\/(?:[^\s'"`/]+\/)*[^\s'"`/)]+/g, (found) => path.basename(found))
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function isInside(dir: string, file: string): boolean {
  const relative = path.relative(dir, file)
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative)
}
