#!/usr/bin/env node
// Bundles the built `flowadmin` command (packages/server/dist/cli/main.js and what it imports) into
// packages/server/dist/bundle/, the last step of `pnpm build`. The command starts from it in a good
// deal less time than from the two hundred files it is made of: each file costs a resolution, a
// read and a compilation of its own. bin/flowadmin.cjs runs the bundle only while it is newer than
// every package's last compilation, and the files themselves otherwise.
//
// The bundle is split (COMMAND_BUILD's `splitting`): what the command's code imports on demand
// (each command but the one run, the store the settings name, the adapters of passkeys, second
// factors, single sign-on and npm installs) is in chunks of its own beside cli.js, read only when
// first imported, so a start reads and compiles only what its settings use.
//
// Left out of the bundle, and imported from where they are installed:
// - the packages with a compiled part (argon2, better-sqlite3), which find it beside their own files;
// - what the command loads only on demand, whole packages with imports of their own: the
//   PostgreSQL store, prom-client, hono-openapi and its schema converters, pino-pretty.
// Code that finds files beside its own (`import.meta.url`: the console's page, the server's
// package.json, the demo) is given the address of its original file.
//
//   node scripts/bundle-cli.mjs
import { mkdir, readdir, readFile, rm, utimes, writeFile } from 'node:fs/promises'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { COMMAND_BUILD } from './command-build.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const SERVER = path.join(ROOT, 'packages', 'server')
const OUT = path.join(SERVER, 'dist', 'bundle')

const EXTERNAL = [
  'argon2',
  'better-sqlite3',
  '@node-rs/bcrypt',
  '@flowadmin/adapter-postgres',
  'prom-client',
  'hono-openapi',
  'pino-pretty',
]

/** An import of the bundle, relative to the bundle's folder: `./x` or `../x`. */
const fromBundle = (file) => {
  const relative = path.relative(OUT, file).split(path.sep).join('/')
  return relative.startsWith('.') ? relative : `./${relative}`
}

/** Resolves each external package from the file that imports it, and imports that file by its path. */
const externals = {
  name: 'externals',
  setup(bundler) {
    const filter = new RegExp(`^(${EXTERNAL.map((name) => name.replace(/[/.]/g, '\\$&')).join('|')})$`)
    bundler.onResolve({ filter }, async (args) => {
      if (args.pluginData === 'externals') return undefined
      const found = await bundler.resolve(args.path, {
        kind: args.kind,
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: 'externals',
      })
      if (found.errors.length > 0) return { errors: found.errors }
      return { path: fromBundle(found.path), external: true }
    })
    bundler.onLoad({ filter: /\.(c|m)?js$/ }, async (args) => {
      // Read once here and handed to esbuild, which would otherwise read the file again.
      const source = await readFile(args.path, 'utf8')
      const original = `new URL(${JSON.stringify(fromBundle(args.path))}, import.meta.url).href`
      return {
        contents: source.includes('import.meta.url')
          ? source.replaceAll('import.meta.url', original)
          : source,
        loader: 'js',
        resolveDir: path.dirname(args.path),
      }
    })
  },
}

const result = await build({
  entryPoints: { cli: path.join(SERVER, 'dist', 'cli', 'main.js') },
  outdir: OUT,
  write: false,
  ...COMMAND_BUILD,
  chunkNames: 'chunk-[hash]',
  plugins: [externals],
  // The CommonJS packages in the bundle (pino and its streams) require Node's modules.
  banner: {
    js: "import { createRequire as __createRequire } from 'node:module'; const require = __createRequire(import.meta.url);",
  },
})

/** Whether the bundle on disk is, file for file, the one just made. */
async function same(files) {
  try {
    const names = await readdir(OUT)
    if (names.length !== files.length) return false
    for (const file of files) {
      const written = await readFile(file.path)
      if (!written.equals(file.contents)) return false
    }
    return true
  } catch {
    return false
  }
}

if (await same(result.outputFiles)) {
  // bin/flowadmin.cjs runs the bundle while it is newer than the last compilation: it still is.
  const now = new Date()
  for (const file of result.outputFiles) await utimes(file.path, now, now)
  process.stdout.write(`flowadmin: the command's bundle in ${path.relative(ROOT, OUT)} is unchanged\n`)
} else {
  await rm(OUT, { recursive: true, force: true })
  await mkdir(OUT, { recursive: true })
  for (const file of result.outputFiles) await writeFile(file.path, file.contents)
  process.stdout.write(`flowadmin: bundled the command into ${path.relative(ROOT, OUT)}\n`)
}
