import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  createDiskLoader,
  type DiscoveredModule,
  discoverModules,
  toDescriptors,
  typesOf,
} from '../src/index.js'

let userDir: string
let warnings: string[]
const warn = (message: string) => warnings.push(message)

beforeEach(async () => {
  userDir = await mkdtemp(path.join(tmpdir(), 'flowadmin-modules-'))
  warnings = []
})
afterEach(async () => {
  await rm(userDir, { recursive: true, force: true })
})

/** Writes `<userDir>/node_modules/<name>/` with a package.json (object or raw text) and files. */
async function install(
  name: string,
  pkg: object | string,
  files: Record<string, string> = {},
): Promise<string> {
  const dir = path.join(userDir, 'node_modules', name)
  await mkdir(dir, { recursive: true })
  await writeFile(path.join(dir, 'package.json'), typeof pkg === 'string' ? pkg : JSON.stringify(pkg))
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true })
    await writeFile(path.join(dir, file), content)
  }
  return dir
}

const template = (type: string) =>
  `<script type="text/html" data-template-name="${type}"><div></div></script>\n`
const js = 'module.exports = function (RED) { RED.nodes.registerType("x", function () {}) }\n'

/** Loads every set discovery found, as the core would. */
async function loadAll(modules: DiscoveredModule[]) {
  const loader = createDiskLoader(modules)
  const outcomes: Record<string, unknown> = {}
  for (const module of modules) {
    for (const set of module.sets) {
      const id = `${module.name}/${set.name}`
      outcomes[id] = await loader.load({ id, module: module.name, name: set.name })
    }
  }
  return outcomes
}

describe('typesOf', () => {
  it('reads data-template-name in either quote style and any attribute order', () => {
    const html = [
      '<script type="text/html" data-template-name="alpha"></script>',
      "<script data-template-name='beta' type='text/html'></script>",
      '<SCRIPT TYPE="text/html" DATA-TEMPLATE-NAME="gamma"></SCRIPT>',
      '<script type="text/html" data-help-name="alpha"></script>',
      '<script type="text/javascript">RED.nodes.registerType("alpha", {})</script>',
      '<script type="text/html" data-template-name="alpha"></script>',
    ].join('\n')
    expect(typesOf(html)).toEqual(['alpha', 'beta', 'gamma'])
  })

  it('finds nothing in HTML without templates', () => {
    expect(typesOf('<p data-template-name="x">not a script</p>')).toEqual([])
  })
})

describe('discoverModules', () => {
  it('finds nothing when there is no node_modules folder', async () => {
    expect(await discoverModules(userDir, warn)).toEqual([])
    expect(warnings).toEqual([])
  })

  it('finds a module declared under "node-red", laid out like node-red-node-random', async () => {
    await install(
      'node-red-node-random',
      '{\n    "name"          : "node-red-node-random",\n    "version"       : "0.4.1",\n' +
        '    "node-red"      : {\n        "nodes"     : {\n            "random": "random.js"\n        }\n    }\n}\n',
      {
        'random.js':
          'module.exports = function(RED) {\n    "use strict";\n    RED.nodes.registerType("random",function(n){});\n}\n',
        'random.html': `${template('random')}<script type="text/html" data-help-name="random"><p>help</p></script>`,
        'locales/en-US/random.json': '{}',
      },
    )
    const modules = await discoverModules(userDir, warn)
    expect(toDescriptors(modules)).toEqual([
      { name: 'node-red-node-random', version: '0.4.1', sets: [{ name: 'random', types: ['random'] }] },
    ])
    expect(await loadAll(modules)).toEqual({ 'node-red-node-random/random': { ok: true } })
    expect(warnings).toEqual([])
  })

  it('finds scoped modules and the neutral "flowadmin" key, sorted by name, sets in manifest order', async () => {
    await install(
      '@acme/text',
      {
        name: '@acme/text',
        version: '2.0.0',
        flowadmin: { nodes: { upper: 'nodes/upper.js', lower: 'nodes/lower.js' } },
      },
      {
        'nodes/upper.js': js,
        'nodes/upper.html': template('upper') + template('upper-config'),
        'nodes/lower.js': js,
        'nodes/lower.html': template('lower'),
      },
    )
    await install(
      'plain',
      { name: 'plain', version: '1.0.0', 'node-red': { nodes: { p: 'p.js' } } },
      {
        'p.js': js,
        'p.html': template('p'),
      },
    )
    await install('lodash', { name: 'lodash', version: '4.17.21', main: 'lodash.js' })
    await install('only-plugins', {
      name: 'only-plugins',
      version: '1.0.0',
      'node-red': { plugins: { x: 'x.js' } },
    })

    const modules = await discoverModules(userDir, warn)
    expect(toDescriptors(modules)).toEqual([
      {
        name: '@acme/text',
        version: '2.0.0',
        sets: [
          { name: 'upper', types: ['upper', 'upper-config'] },
          { name: 'lower', types: ['lower'] },
        ],
      },
      { name: 'plain', version: '1.0.0', sets: [{ name: 'p', types: ['p'] }] },
    ])
    expect(await loadAll(modules)).toEqual({
      '@acme/text/upper': { ok: true },
      '@acme/text/lower': { ok: true },
      'plain/p': { ok: true },
    })
    expect(warnings).toEqual([])
  })

  it('follows symbolic links to package folders', async () => {
    const real = path.join(userDir, 'elsewhere')
    await mkdir(real)
    await writeFile(
      path.join(real, 'package.json'),
      JSON.stringify({ name: 'linked', version: '1.0.0', 'node-red': { nodes: { l: 'l.js' } } }),
    )
    await writeFile(path.join(real, 'l.js'), js)
    await writeFile(path.join(real, 'l.html'), template('linked-type'))
    await mkdir(path.join(userDir, 'node_modules'))
    await symlink(real, path.join(userDir, 'node_modules', 'linked'))
    expect(toDescriptors(await discoverModules(userDir, warn))).toEqual([
      { name: 'linked', version: '1.0.0', sets: [{ name: 'l', types: ['linked-type'] }] },
    ])
  })

  it('skips broken packages with one warning each and keeps the good ones', async () => {
    await install('bad-json', '{"name": "bad-json", "node-red": {')
    await install('bad-nodes', { name: 'bad-nodes', version: '1.0.0', 'node-red': { nodes: ['a.js'] } })
    await install('no-name', { version: '1.0.0', 'node-red': { nodes: { a: 'a.js' } } })
    await install('escapes', {
      name: 'escapes',
      version: '1.0.0',
      'node-red': { nodes: { evil: '../../../etc/passwd' } },
    })
    await mkdir(path.join(userDir, 'node_modules', 'not-a-package'), { recursive: true })
    await mkdir(path.join(userDir, 'node_modules', '.bin'), { recursive: true })
    await install(
      'good',
      { name: 'good', version: '1.0.0', 'node-red': { nodes: { g: 'g.js' } } },
      {
        'g.js': js,
        'g.html': template('g'),
      },
    )

    const modules = await discoverModules(userDir, warn)
    expect(modules.map((module) => module.name)).toEqual(['escapes', 'good'])
    expect(modules[0]?.sets).toEqual([])
    expect(warnings).toHaveLength(4)
    expect(warnings.join('\n')).toMatch(/skipped bad-json: package\.json is unreadable/)
    expect(warnings.join('\n')).toMatch(/skipped bad-nodes: "node-red\.nodes" must map set names to files/)
    expect(warnings.join('\n')).toMatch(/skipped no-name: package\.json has no name/)
    expect(warnings.join('\n')).toMatch(
      /skipped node set "evil" of escapes: its file lies outside the package/,
    )
  })

  it('tells which installed packages have an unreadable package.json, by package name', async () => {
    await install('@sc/bar', '{"name": "@sc/bar", "node-red": {')
    await install('plain-bad', '')
    await install('bad-nodes', { name: 'bad-nodes', version: '1.0.0', 'node-red': { nodes: ['a.js'] } })
    await mkdir(path.join(userDir, 'node_modules', 'not-a-package'), { recursive: true })
    const unreadable: string[] = []
    expect(await discoverModules(userDir, warn, (name) => unreadable.push(name))).toEqual([])
    expect(unreadable.sort()).toEqual(['@sc/bar', 'plain-bad'])
  })

  it('reports a set whose files are missing or broken with a load error that names no path', async () => {
    await install(
      'half',
      {
        name: 'half',
        'node-red': { nodes: { gone: 'gone.js', nohtml: 'nohtml.js', broken: 'lib/broken.js', ok: 'ok.js' } },
      },
      {
        'nohtml.js': js,
        'lib/broken.js':
          'module.exports = function (RED) {\n  RED.nodes.registerType("broken", function () {\n',
        'lib/broken.html': template('broken'),
        'ok.js': `#!/usr/bin/env node\nreturn\n${js}`,
        'ok.html': template('ok'),
      },
    )
    const modules = await discoverModules(userDir, warn)
    expect(toDescriptors(modules)).toEqual([
      {
        name: 'half',
        version: '0.0.0',
        sets: [
          { name: 'gone', types: [] },
          { name: 'nohtml', types: [] },
          { name: 'broken', types: ['broken'] },
          { name: 'ok', types: ['ok'] },
        ],
      },
    ])
    const outcomes = await loadAll(modules)
    expect(outcomes).toEqual({
      'half/gone': { ok: false, message: 'Cannot read gone.html' },
      'half/nohtml': { ok: false, message: 'Cannot read nohtml.html' },
      'half/broken': { ok: false, message: expect.stringMatching(/^broken\.js: SyntaxError: /) },
      'half/ok': { ok: true },
    })
    expect(JSON.stringify(outcomes)).not.toContain(userDir)
  })

  it('parses ES modules without running them', async () => {
    const marker = path.join(userDir, 'ran')
    await install(
      'esm-nodes',
      {
        name: 'esm-nodes',
        version: '1.0.0',
        type: 'module',
        'node-red': { nodes: { good: 'good.js', bad: 'bad.mjs' } },
      },
      {
        'good.js': `import { writeFileSync } from 'node:fs'\nwriteFileSync(${JSON.stringify(marker)}, 'x')\nexport default function (RED) {}\n`,
        'good.html': template('esm-good'),
        'bad.mjs': 'export default function (RED) {\n',
        'bad.html': template('esm-bad'),
      },
    )
    const outcomes = await loadAll(await discoverModules(userDir, warn))
    expect(outcomes).toEqual({
      'esm-nodes/good': { ok: true },
      'esm-nodes/bad': { ok: false, message: expect.stringMatching(/^bad\.mjs: SyntaxError: /) },
    })
    expect(JSON.stringify(outcomes)).not.toContain(userDir)
    await expect(import('node:fs/promises').then((fs) => fs.access(marker))).rejects.toThrow()
  })

  it('names no path when the compiler names one, e.g. a file an ES module package cannot load', async () => {
    await install(
      'esm-odd',
      { name: 'esm-odd', version: '1.0.0', type: 'module', 'node-red': { nodes: { n: 'lib/n.ts' } } },
      { 'lib/n.ts': 'export default function (RED) {}\n', 'lib/n.html': template('esm-odd') },
    )
    const outcomes = await loadAll(await discoverModules(userDir, warn))
    expect(outcomes).toEqual({
      'esm-odd/n': {
        ok: false,
        message: expect.stringMatching(/^n\.ts: TypeError \[ERR_UNKNOWN_FILE_EXTENSION\].* for n\.ts$/),
      },
    })
    expect(JSON.stringify(outcomes['esm-odd/n'])).not.toContain('/')
  })

  it('does not run CommonJS code either', async () => {
    const marker = path.join(userDir, 'ran')
    await install(
      'cjs-side-effect',
      { name: 'cjs-side-effect', 'node-red': { nodes: { s: 's.js' } } },
      {
        's.js': `require('node:fs').writeFileSync(${JSON.stringify(marker)}, 'x')\n`,
        's.html': template('s'),
      },
    )
    expect(await loadAll(await discoverModules(userDir, warn))).toEqual({ 'cjs-side-effect/s': { ok: true } })
    await expect(import('node:fs/promises').then((fs) => fs.access(marker))).rejects.toThrow()
  })

  it('keeps the first of two folders that claim the same package name', async () => {
    await install('a-copy', { name: 'dup', version: '1.0.0', 'node-red': { nodes: { d: 'd.js' } } })
    await install('b-copy', { name: 'dup', version: '2.0.0', 'node-red': { nodes: { d: 'd.js' } } })
    const modules = await discoverModules(userDir, warn)
    expect(modules.map((module) => [module.name, module.version])).toEqual([['dup', '1.0.0']])
    expect(warnings).toEqual(['skipped b-copy: another folder already provides dup'])
  })

  it('answers an unknown set with a load error', async () => {
    const loader = createDiskLoader([])
    expect(await loader.load({ id: 'x/y', module: 'x', name: 'y' })).toEqual({
      ok: false,
      message: 'Node set files not found',
    })
  })
})
