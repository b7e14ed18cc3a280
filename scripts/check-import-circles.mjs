// Fails on any import circle among the sources of packages/*/src (test files excluded): each file's
// relative imports (`import`, `import type`, `export … from`, `import()`) resolved to files, each
// circle printed as the path of files it goes round. Circles of types count too: two files that
// need each other's types share a piece that has no home of its own yet.
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

/** Whether `file` is a test, which the check leaves out. */
const isTest = (file) => /\.(test|spec)\.tsx?$/.test(file)

/** The TypeScript sources under packages/<name>/src of `root`, tests left out, sorted. */
export function sourceFiles(root) {
  const files = []
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name)
      if (entry.isDirectory()) walk(path)
      else if (/\.(ts|tsx|mts|cts)$/.test(entry.name) && !entry.name.endsWith('.d.ts') && !isTest(path))
        files.push(path)
    }
  }
  const packages = join(root, 'packages')
  for (const entry of readdirSync(packages, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue
    const src = join(packages, entry.name, 'src')
    if (existsSync(src)) walk(src)
  }
  return files.sort()
}

/** The relative specifiers `source` imports, type-only imports and re-exports included. */
export function relativeImports(source) {
  return ts
    .preProcessFile(source, true, true)
    .importedFiles.map((imported) => imported.fileName)
    .filter((specifier) => specifier.startsWith('./') || specifier.startsWith('../'))
}

/** The file of `files` that `specifier`, imported by `from`, names (`./x.js` is x.ts); or null. */
function resolveImport(from, specifier, files) {
  const target = resolve(dirname(from), specifier)
  const stem = target.replace(/\.(m|c)?jsx?$/, '')
  const candidates = [
    target,
    `${stem}.ts`,
    `${stem}.tsx`,
    `${stem}.mts`,
    `${stem}.cts`,
    join(target, 'index.ts'),
    join(target, 'index.tsx'),
  ]
  return candidates.find((candidate) => files.has(candidate)) ?? null
}

/**
 * The import graph of `files`: each file and the files among them it imports, in order.
 * `read(file)` gives a file's source.
 */
export function importGraph(files, read = (file) => readFileSync(file, 'utf8')) {
  const known = new Set(files)
  const graph = new Map()
  for (const file of files) {
    const targets = relativeImports(read(file))
      .map((specifier) => resolveImport(file, specifier, known))
      .filter((target) => target !== null)
    graph.set(file, [...new Set(targets)])
  }
  return graph
}

/** The strongly connected components of `graph` (Tarjan), each a sorted list of files. */
function components(graph) {
  const index = new Map()
  const low = new Map()
  const stack = []
  const onStack = new Set()
  const found = []
  let next = 0
  const visit = (file) => {
    index.set(file, next)
    low.set(file, next)
    next++
    stack.push(file)
    onStack.add(file)
    for (const target of graph.get(file) ?? []) {
      if (!index.has(target)) {
        visit(target)
        low.set(file, Math.min(low.get(file), low.get(target)))
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file), index.get(target)))
    }
    if (low.get(file) !== index.get(file)) return
    const component = []
    for (;;) {
      const member = stack.pop()
      onStack.delete(member)
      component.push(member)
      if (member === file) break
    }
    found.push(component.sort())
  }
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) visit(file)
  return found
}

/** At most this many paths are listed for one circle. */
const MOST_PATHS = 20

/**
 * The import circles of `graph`, sorted: each a set of files that import one another, round and
 * round (a file importing itself is one too), with the paths of imports that go round it: each
 * file on a path once, from the first in sort order back to it.
 */
export function findCircles(graph) {
  const circles = []
  for (const files of components(graph)) {
    if (files.length === 1 && !(graph.get(files[0]) ?? []).includes(files[0])) continue
    const paths = []
    // Each path is found from its first file in sort order, going through later files only.
    for (const [at, start] of files.entries()) {
      const later = new Set(files.slice(at))
      const walk = (file, path) => {
        for (const target of graph.get(file) ?? []) {
          if (paths.length >= MOST_PATHS || !later.has(target)) continue
          if (target === start) paths.push([...path, start])
          else if (!path.includes(target)) walk(target, [...path, target])
        }
      }
      walk(start, [start])
    }
    circles.push({ files, paths })
  }
  return circles.sort((a, b) => a.files[0].localeCompare(b.files[0]))
}

function main() {
  const root = fileURLToPath(new URL('..', import.meta.url))
  const files = sourceFiles(root)
  const circles = findCircles(importGraph(files))
  if (circles.length === 0) {
    console.log(`no import circles among the ${files.length} source files of packages/*/src`)
    return
  }
  console.error(`${circles.length} import circle(s) among the source files of packages/*/src:`)
  for (const circle of circles) {
    console.error(`- ${circle.files.length} files:`)
    for (const path of circle.paths)
      console.error(`    ${path.map((file) => relative(root, file)).join(' → ')}`)
  }
  console.error(
    'Give the piece the files of a circle share a file of its own that each imports, or move it into the one file that needs it.',
  )
  process.exitCode = 1
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main()
