// An npm registry the tests serve themselves on 127.0.0.1: a packument per package and tarballs
// made with the real `npm pack`, so installing needs no internet. It records every request.
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { writeNodeModulePackage } from './ecosystem.js'

export interface FixturePackage {
  name: string
  version: string
  /** Node sets and their types; absent: a plain package, not a node module. */
  sets?: Record<string, string[]>
  /** Extra package.json fields, e.g. `scripts`. */
  fields?: Record<string, unknown>
}

/** The environment of npm run by a test: no `npm_*` variables of the package manager running it. */
export function cleanNpmEnvironment(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) if (!/^npm_/i.test(name)) env[name] = value
  return { ...env, ...extra }
}

function run(command: string, args: string[], cwd: string): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { cwd, env: cleanNpmEnvironment(), timeout: 60_000 }, (error, stdout, stderr) =>
      error ? reject(new Error(`${command} ${args.join(' ')}: ${stderr || error.message}`)) : resolve(stdout),
    )
  })
}

export async function startLocalRegistry() {
  const work = await mkdtemp(path.join(tmpdir(), 'flowadmin-registry-'))
  const packuments = new Map<
    string,
    { name: string; 'dist-tags': Record<string, string>; versions: Record<string, unknown> }
  >()
  const tarballs = new Map<string, Buffer>()
  /** Package names whose requests are never answered (an npm that hangs). */
  const hanging = new Set<string>()
  const requests: string[] = []
  const held: Array<() => void> = []

  const server: Server = createServer((req, res) => {
    const url = decodeURIComponent((req.url ?? '/').split('?')[0] as string)
    requests.push(`${req.method} ${url}`)
    const name = url.slice(1)
    if (hanging.has(name)) {
      held.push(() => res.destroy())
      return
    }
    const tarball = tarballs.get(url)
    if (tarball !== undefined) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': tarball.length })
      return res.end(tarball)
    }
    const packument = packuments.get(name)
    if (packument !== undefined) {
      res.writeHead(200, { 'content-type': 'application/json' })
      return res.end(JSON.stringify(packument))
    }
    res.writeHead(404, { 'content-type': 'application/json' })
    res.end('{"error":"Not found"}')
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`

  /** Packs a fixture with `npm pack`; returns the tarball's bytes. */
  async function pack(fixture: FixturePackage): Promise<Buffer> {
    const dir = await mkdtemp(path.join(work, 'pkg-'))
    const manifest = { name: fixture.name, version: fixture.version, ...fixture.fields }
    if (fixture.sets === undefined) {
      await writeFile(path.join(dir, 'package.json'), JSON.stringify(manifest))
      await writeFile(path.join(dir, 'index.js'), 'module.exports = {}\n')
    } else {
      await writeNodeModulePackage(dir, manifest, fixture.sets)
    }
    const file = (await run('npm', ['pack', '--silent', '--pack-destination', work], dir))
      .trim()
      .split('\n')
      .at(-1)
    return readFile(path.join(work, file as string))
  }

  return {
    url,
    /** Every request so far, `GET /name`, in order. */
    requests,
    /** Publishes a fixture; returns the tarball's URL. */
    async publish(fixture: FixturePackage): Promise<string> {
      const bytes = await pack(fixture)
      const file = `/-/${fixture.name.replace('/', '-')}-${fixture.version}.tgz`
      tarballs.set(file, bytes)
      const packument = packuments.get(fixture.name) ?? { name: fixture.name, 'dist-tags': {}, versions: {} }
      packument.versions[fixture.version] = {
        name: fixture.name,
        version: fixture.version,
        ...fixture.fields,
        dist: {
          tarball: `${url}${file.slice(1)}`,
          shasum: createHash('sha1').update(bytes).digest('hex'),
          integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}`,
        },
      }
      packument['dist-tags'].latest = fixture.version
      packuments.set(fixture.name, packument)
      return `${url}${file.slice(1)}`
    },
    /** Requests for this package's packument are never answered. */
    hang(name: string) {
      hanging.add(name)
    },
    /** The requests that concern a package (its packument or its tarballs). */
    requestsFor(name: string): string[] {
      return requests.filter(
        (line) => line.includes(` /${name}`) || line.includes(`/-/${name.replace('/', '-')}-`),
      )
    },
    async close() {
      for (const release of held) release()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
      await rm(work, { recursive: true, force: true })
    },
  }
}

export type LocalRegistry = Awaited<ReturnType<typeof startLocalRegistry>>
