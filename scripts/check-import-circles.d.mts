/** The TypeScript sources under packages/<name>/src of `root`, tests left out, sorted. */
export function sourceFiles(root: string): string[]

/** The relative specifiers `source` imports, type-only imports and re-exports included. */
export function relativeImports(source: string): string[]

/**
 * The import graph of `files`: each file and the files among them it imports, in order.
 * `read(file)` gives a file's source.
 */
export function importGraph(files: string[], read?: (file: string) => string): Map<string, string[]>

/** A set of files that import one another, round and round, and the paths of imports round it. */
export interface ImportCircle {
  files: string[]
  paths: string[][]
}

/** The import circles of `graph`, sorted by their first file. */
export function findCircles(graph: Map<string, string[]>): ImportCircle[]
