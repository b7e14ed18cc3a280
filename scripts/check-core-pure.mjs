// Proves the core is pure: no dependencies, no Node built-ins, no I/O, no ambient clock or randomness
// outside system.ts. Exits non-zero with the reasons when it is not.
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { build } from 'esbuild'

const root = new URL('../packages/core/', import.meta.url).pathname
const problems = []

const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies', 'devDependencies']) {
  if (manifest[field] && Object.keys(manifest[field]).length > 0) problems.push(`package.json has ${field}`)
}

// Bundling for a neutral platform fails on any import it cannot resolve without Node.
const result = await build({
  entryPoints: [join(root, 'src/index.ts')],
  bundle: true,
  platform: 'neutral',
  format: 'esm',
  write: false,
  logLevel: 'silent',
}).catch((error) => {
  problems.push(`neutral bundle failed: ${error.message}`)
  return null
})
if (result) {
  const code = result.outputFiles[0].text
  const builtins = code.match(
    /(?:from\s*["']|require\(\s*["']|import\(\s*["'])(node:[\w/]+|fs|path|os|crypto|child_process|net|http)["']/g,
  )
  if (builtins) problems.push(`bundle imports Node built-ins: ${builtins.join(', ')}`)
  console.log(
    `core bundle (platform=neutral): ${code.length} bytes, no imports left: ${!/\bimport\s.*from/.test(code)}`,
  )
}

// Ambient effects are allowed in system.ts only.
const forbidden = [
  /\bprocess\./,
  /\bBuffer\b/,
  /\bDate\.now\(/,
  /\bMath\.random\(/,
  /\bcrypto\b/,
  /\brequire\(/,
]
function* sources(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) yield* sources(path)
    else if (path.endsWith('.ts') && !path.endsWith('.test.ts')) yield path
  }
}
for (const file of sources(join(root, 'src'))) {
  if (file.endsWith('/system.ts')) continue
  const lines = readFileSync(file, 'utf8').split('\n')
  lines.forEach((line, i) => {
    if (line.trim().startsWith('//') || line.trim().startsWith('*')) return
    for (const pattern of forbidden) {
      if (pattern.test(line)) problems.push(`${relative(root, file)}:${i + 1} uses ${pattern.source}`)
    }
  })
}

if (problems.length > 0) {
  console.error(`The core is not pure:\n- ${problems.join('\n- ')}`)
  process.exit(1)
}
console.log('core is pure: no dependencies, no Node built-ins, effects only in system.ts')
