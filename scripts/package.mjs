#!/usr/bin/env node
// Packs the server into one installable tarball, `flowadmin-<version>.tgz`: the server and the
// workspace packages it uses (core, adapters) bundled into its dist by esbuild, the console's built
// page and assets beside them, and every third-party package (argon2, better-sqlite3, hono, ...)
// left to npm as a dependency, so `npm install -g ./flowadmin-<version>.tgz` installs and builds
// those as usual. The console must have been built (`pnpm build`, or `pnpm package`, which builds it).
// Then packs the Node-RED helper (packages/node-red, plain files, no dependencies) as it is, into
// `flowadmin-node-red-<version>.tgz`: an instance installs it with `npm install <that file>` in its
// userDir.
//
//   node scripts/package.mjs [--out DIR]     (prints the two tarballs' paths, one a line)
import { execFileSync } from 'node:child_process'
import {
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { build } from 'esbuild'
import { COMMAND_BUILD } from './command-build.mjs'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const PACKAGES = path.join(ROOT, 'packages')
/** The package name users install, and the name of its command. */
const NAME = 'flowadmin'
const WORKSPACE = '@flowadmin/'

/** The console's page and assets as `pnpm build` writes them (packages/console/build.mjs). */
const CONSOLE = path.join(PACKAGES, 'console', 'dist', 'public')
/** What the console's build writes beside the page for itself (its report and the mark of what it
 * built), and the server never sends. */
const CONSOLE_OWN = ['sizes.json', 'build-stamp']

const { values } = parseArgs({ options: { out: { type: 'string', default: ROOT } } })
const out = path.resolve(values.out)

// A package without its console would install and start, and answer 404 at `/`: refuse it here.
if (!existsSync(path.join(CONSOLE, 'index.html'))) {
  process.stderr.write(
    `package: the console is not built (${path.relative(ROOT, path.join(CONSOLE, 'index.html'))} is missing): run \`pnpm build\` first\n`,
  )
  process.exit(1)
}

const manifestOf = (folder) => JSON.parse(readFileSync(path.join(PACKAGES, folder, 'package.json'), 'utf8'))

/**
 * The third-party dependencies of the server and of every workspace package it uses, each with
 * the range its package asks for.
 */
function thirdPartyDependencies(folder, found = {}, seen = new Set()) {
  seen.add(folder)
  for (const [name, range] of Object.entries(manifestOf(folder).dependencies ?? {})) {
    if (!name.startsWith(WORKSPACE)) found[name] ??= range
    else if (!seen.has(name.slice(WORKSPACE.length)))
      thirdPartyDependencies(name.slice(WORKSPACE.length), found, seen)
  }
  return found
}

const server = manifestOf('server')
const dependencies = thirdPartyDependencies('server')
const work = mkdtempSync(path.join(tmpdir(), 'flowadmin-package-'))
try {
  const stage = path.join(work, NAME)
  await build({
    entryPoints: { cli: 'packages/server/src/cli/main.ts', index: 'packages/server/src/index.ts' },
    absWorkingDir: ROOT,
    outdir: path.join(stage, 'dist'),
    ...COMMAND_BUILD,
    // The workspace packages' own source, through the condition their manifests declare.
    conditions: ['@flowadmin/source'],
    external: Object.keys(dependencies).flatMap((name) => [name, `${name}/*`]),
    // Beside the entry points: the server finds its package.json one folder up from its code.
    chunkNames: '[name]-[hash]',
  })
  // The console's code, bundled into dist/ like the rest, finds its page at `../dist/public` from
  // its own file (packages/console/src/serve.ts): that is dist/public here too.
  cpSync(CONSOLE, path.join(stage, 'dist', 'public'), {
    recursive: true,
    filter: (source) => !CONSOLE_OWN.includes(path.basename(source)),
  })
  cpSync(path.join(PACKAGES, 'server', 'bin'), path.join(stage, 'bin'), { recursive: true })
  copyFileSync(path.join(ROOT, 'README.md'), path.join(stage, 'README.md'))
  const manifest = {
    name: NAME,
    version: server.version,
    description:
      'The administration API of a flow-based runtime: login schemes, bearer tokens, node module enablement.',
    type: 'module',
    license: server.license,
    engines: JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).engines,
    bin: server.bin,
    exports: { '.': './dist/index.js' },
    files: ['bin', 'dist'],
    dependencies: Object.fromEntries(Object.entries(dependencies).sort(([a], [b]) => a.localeCompare(b))),
  }
  writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(manifest, null, 2)}\n`)
  mkdirSync(out, { recursive: true })
  const packed = execFileSync('npm', ['pack', '--json', '--pack-destination', out, stage], {
    cwd: work,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const [{ filename }] = JSON.parse(packed)
  const helper = execFileSync(
    'npm',
    ['pack', '--json', '--pack-destination', out, path.join(PACKAGES, 'node-red')],
    {
      cwd: work,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  )
  const [{ filename: helperFile }] = JSON.parse(helper)
  process.stdout.write(`${path.join(out, filename)}\n${path.join(out, helperFile)}\n`)
} finally {
  rmSync(work, { recursive: true, force: true })
}
