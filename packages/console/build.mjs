// Type-checks the page (tsc -p ui) and bundles it into dist/public: index.html and content-hashed
// assets under console/, and signin.js (the script of the server's sign-in page, which names it
// without a hash), each also brotli- and gzip-compressed, so the server sends them as they
// are. Either step is skipped when its inputs are those of the last build, so an unchanged console
// costs `pnpm build` and `pnpm start` half a second instead of several.
import { execFileSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs'
import { createRequire } from 'node:module'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import { build } from 'esbuild'

const here = path.dirname(fileURLToPath(import.meta.url))
const out = path.join(here, 'dist', 'public')
const ASSETS = 'console'

/**
 * Whether the page's last type-check (its incremental build info, dist/ui.tsbuildinfo) passed and
 * is newer than every file it read and than the settings, with no file added to ui/ since: tsc -b's
 * own rule for a project that is up to date.
 */
function typeCheckedAlready(tsc) {
  const infoFile = path.join(here, 'dist', 'ui.tsbuildinfo')
  let info
  let checked
  try {
    info = JSON.parse(readFileSync(infoFile, 'utf8'))
    checked = statSync(infoFile).mtimeMs
  } catch {
    return false
  }
  const typescript = JSON.parse(readFileSync(path.join(path.dirname(tsc), '..', 'package.json'), 'utf8'))
  if (info.version !== typescript.version || !Array.isArray(info.fileNames)) return false
  // Diagnostics kept, or files left to check: the last run did not end clean.
  if (
    ['errors', 'semanticDiagnosticsPerFile', 'emitDiagnosticsPerFile', 'changeFileSet'].some(
      (key) => key in info,
    )
  ) {
    return false
  }
  const read = new Set(info.fileNames.map((name) => path.resolve(path.dirname(infoFile), name)))
  const settings = [path.join(here, 'ui', 'tsconfig.json'), path.join(here, '..', '..', 'tsconfig.base.json')]
  const ui = readdirSync(path.join(here, 'ui'), { recursive: true, encoding: 'utf8' })
    .filter((name) => /\.tsx?$/.test(name))
    .map((name) => path.join(here, 'ui', name))
  if (ui.some((file) => !read.has(file))) return false
  for (const file of [...read, ...settings]) {
    try {
      if (statSync(file).mtimeMs > checked) return false
    } catch {
      return false
    }
  }
  return true
}

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc')
if (typeCheckedAlready(tsc)) console.log('console: type-checked already')
else {
  execFileSync(process.execPath, [tsc, '-p', path.join(here, 'ui')], { stdio: 'inherit' })
  // tsc leaves its build info as it was when no file's content changed (a file only touched).
  const now = new Date()
  utimesSync(path.join(here, 'dist', 'ui.tsbuildinfo'), now, now)
}

/**
 * flowadmin's look, whose home is beside the sign-in page in the HTTP adapter (the page inlines
 * it): its tokens, the rules both pages share and the logo. Bundled by esbuild, then imported.
 */
async function loadDesign() {
  const file = path.join(here, '..', 'adapter-http', 'src', 'sign-in-page', 'design.ts')
  const bundled = await build({
    entryPoints: [file],
    bundle: true,
    write: false,
    format: 'esm',
    logLevel: 'warning',
  })
  const code = Buffer.from(bundled.outputFiles[0].contents).toString('base64')
  return import(`data:text/javascript;base64,${code}`)
}
const design = await loadDesign()

/** `@import "flowadmin:design"` in ui/style.css: the tokens and the shared rules, before the console's own. */
const designSheet = {
  name: 'flowadmin-design',
  setup(build) {
    build.onResolve({ filter: /^flowadmin:design$/ }, ({ path }) => ({ path, namespace: 'flowadmin-design' }))
    build.onLoad({ filter: /.*/, namespace: 'flowadmin-design' }, () => ({
      contents: `${design.TOKENS}${design.BASE}`,
      loader: 'css',
    }))
  },
}

const result = await build({
  plugins: [designSheet],
  entryPoints: [
    path.join(here, 'ui', 'main.tsx'),
    path.join(here, 'ui', 'style.css'),
    path.join(here, 'ui', 'signin.ts'),
  ],
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome111', 'firefox115', 'safari16.4'],
  jsx: 'automatic',
  jsxImportSource: 'hono/jsx/dom',
  // Workspace packages from their sources, as the tests see them.
  conditions: ['@flowadmin/source'],
  legalComments: 'none',
  write: false,
  outdir: out,
  logLevel: 'warning',
})

// What this build would write follows from the bundle's output and the page and icon added to it: when
// they are those of the last build, its files stand (the brotli pass is most of a build's time).
const template = readFileSync(path.join(here, 'ui', 'index.html'))
const icon = Buffer.from(design.LOGO_SVG)
const digest = createHash('sha256')
for (const part of [
  ...result.outputFiles.map((file) => file.contents),
  template,
  icon,
  readFileSync(import.meta.filename),
]) {
  digest.update(createHash('sha256').update(part).digest())
}
const stamp = digest.digest('hex')
const stampFile = path.join(out, 'build-stamp')
if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) {
  console.log('console: unchanged since the last build')
  process.exit(0)
}

rmSync(out, { recursive: true, force: true })
mkdirSync(path.join(out, ASSETS), { recursive: true })

/** Writes a file with its compressed variants; returns its compressed size. */
function emit(name, content) {
  const file = path.join(out, name)
  const br = brotliCompressSync(content, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } })
  writeFileSync(file, content)
  writeFileSync(`${file}.br`, br)
  writeFileSync(`${file}.gz`, gzipSync(content, { level: 9 }))
  return br.length
}

/** Writes an asset under a name carrying its content's hash; returns that name. */
function asset(base, extension, content) {
  const hash = createHash('sha256').update(content).digest('base64url').slice(0, 10)
  const name = `${ASSETS}/${base}-${hash}${extension}`
  sizes[name] = { bytes: content.length, brotli: emit(name, content) }
  return name
}

const sizes = {}
const named = {}
/** The sign-in page's script: not part of the console's first paint. */
const SIGN_IN = 'signin.js'
let signIn = null
for (const file of result.outputFiles) {
  const extension = path.extname(file.path)
  if (path.basename(file.path) === SIGN_IN) {
    signIn = { bytes: file.contents.length, brotli: emit(SIGN_IN, file.contents) }
    continue
  }
  named[extension] = asset(path.basename(file.path, extension), extension, file.contents)
}
named['.svg'] = asset('icon', '.svg', icon)

const page = template
  .toString('utf8')
  .replace('{{script}}', named['.js'])
  .replace('{{style}}', named['.css'])
  .replace('{{icon}}', named['.svg'])
sizes['index.html'] = { bytes: Buffer.byteLength(page), brotli: emit('index.html', Buffer.from(page)) }

const total = Object.values(sizes).reduce((sum, size) => sum + size.brotli, 0)
writeFileSync(
  path.join(out, 'sizes.json'),
  `${JSON.stringify({ files: sizes, totalBrotli: total, signIn }, null, 2)}\n`,
)
for (const [name, size] of Object.entries(sizes)) {
  console.log(
    `console: ${name.padEnd(32)} ${String(size.bytes).padStart(7)} B, ${String(size.brotli).padStart(6)} B brotli`,
  )
}
console.log(`console: first paint ${total} B brotli-compressed`)
console.log(
  `console: ${SIGN_IN.padEnd(32)} ${String(signIn.bytes).padStart(7)} B, ${String(signIn.brotli).padStart(6)} B brotli (the sign-in page's)`,
)
writeFileSync(stampFile, stamp)
