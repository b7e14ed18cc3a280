// Bundles the console into dist/public: index.html and content-hashed assets under console/,
// each also brotli- and gzip-compressed, so the server sends them as they are.
import { createHash } from 'node:crypto'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import { build } from 'esbuild'

const here = path.dirname(fileURLToPath(import.meta.url))
const out = path.join(here, 'dist', 'public')
const ASSETS = 'console'

const result = await build({
  entryPoints: [path.join(here, 'ui', 'main.tsx'), path.join(here, 'ui', 'style.css')],
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
for (const file of result.outputFiles) {
  const extension = path.extname(file.path)
  named[extension] = asset(path.basename(file.path, extension), extension, file.contents)
}
named['.svg'] = asset('icon', '.svg', readFileSync(path.join(here, 'ui', 'icon.svg')))

const page = readFileSync(path.join(here, 'ui', 'index.html'), 'utf8')
  .replace('{{script}}', named['.js'])
  .replace('{{style}}', named['.css'])
  .replace('{{icon}}', named['.svg'])
sizes['index.html'] = { bytes: Buffer.byteLength(page), brotli: emit('index.html', Buffer.from(page)) }

const total = Object.values(sizes).reduce((sum, size) => sum + size.brotli, 0)
writeFileSync(
  path.join(out, 'sizes.json'),
  `${JSON.stringify({ files: sizes, totalBrotli: total }, null, 2)}\n`,
)
for (const [name, size] of Object.entries(sizes)) {
  console.log(
    `console: ${name.padEnd(32)} ${String(size.bytes).padStart(7)} B, ${String(size.brotli).padStart(6)} B brotli`,
  )
}
console.log(`console: first paint ${total} B brotli-compressed`)
