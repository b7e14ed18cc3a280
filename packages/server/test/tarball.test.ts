// Reading the package.json of an uploaded module tarball: off the event loop, and a gzip bomb
// stopped at the limit with the documented answer.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { createGzip, gzipSync } from 'node:zlib'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { readTarballManifest } from '../src/adapters/tarball.js'
import { type RunningServer, startServer } from '../src/index.js'
import { captureLog } from './log-capture.js'

const MIB = 1024 * 1024
const BOMB_MESSAGE = 'The upload unpacks to more than 256 MiB'

/** A ustar header for a regular file of `size` bytes. */
function header(name: string, size: number): Buffer {
  const block = Buffer.alloc(512)
  block.write(name, 0, 100, 'utf8')
  block.write('0000644\0', 100)
  block.write('0000000\0', 108)
  block.write('0000000\0', 116)
  block.write(`${size.toString(8).padStart(11, '0')}\0`, 124)
  block.write('00000000000\0', 136)
  block.write('0', 156)
  block.write('ustar\0', 257)
  block.write('00', 263)
  block.fill(' ', 148, 156)
  let sum = 0
  for (const byte of block) sum += byte
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148)
  return block
}

const padding = (size: number) => Buffer.alloc((512 - (size % 512)) % 512)

/** A file of `size` zero bytes, then `package/package.json` holding `manifest`, gzipped as it goes. */
async function tarball(zeros: number, manifest: object | null): Promise<Buffer> {
  const gzip = createGzip()
  const out: Buffer[] = []
  gzip.on('data', (chunk: Buffer) => out.push(chunk))
  const ended = new Promise((resolve) => gzip.on('end', resolve))
  const write = (chunk: Buffer) =>
    gzip.write(chunk) ? Promise.resolve() : new Promise((resolve) => gzip.once('drain', resolve))
  await write(header('package/zeros.bin', zeros))
  const chunk = Buffer.alloc(MIB)
  for (let left = zeros; left > 0; left -= MIB) await write(left >= MIB ? chunk : chunk.subarray(0, left))
  await write(padding(zeros))
  if (manifest !== null) {
    const body = Buffer.from(JSON.stringify(manifest))
    await write(Buffer.concat([header('package/package.json', body.length), body, padding(body.length)]))
  }
  gzip.end(Buffer.alloc(1024))
  await ended
  return Buffer.concat(out)
}

/** `work`'s result and how many turns the event loop made while it ran (setImmediate callbacks). */
async function turnsDuring<T>(work: () => Promise<T> | T): Promise<{ result: T; turns: number }> {
  let turns = 0
  let done = false
  const spin = () => {
    if (done) return
    turns++
    setImmediate(spin)
  }
  setImmediate(spin)
  const result = await work()
  done = true
  return { result, turns }
}

describe('readTarballManifest', () => {
  it('finds package.json behind 64 MiB of other files while the event loop keeps turning', async () => {
    const bytes = await tarball(64 * MIB, { name: 'node-red-contrib-big', version: '1.0.0' })
    const { result, turns } = await turnsDuring(() => readTarballManifest(bytes))
    expect(result).toEqual({ ok: true, name: 'node-red-contrib-big', version: '1.0.0' })
    expect(turns).toBeGreaterThan(10)
  })

  it('reads a package.json that spans many blocks after a file of an odd size', async () => {
    const manifest = { name: '@acme/odd', version: '2.3.4', description: 'x'.repeat(100_000) }
    const bytes = await tarball(1_000, manifest)
    expect(await readTarballManifest(bytes)).toEqual({ ok: true, name: '@acme/odd', version: '2.3.4' })
  })

  it('stops a gzip bomb at 256 MiB unpacked, the event loop turning meanwhile', async () => {
    const bomb = await tarball(300 * MIB, { name: 'never-read', version: '1.0.0' })
    expect(bomb.length).toBeLessThan(2 * MIB)
    const { result, turns } = await turnsDuring(() => readTarballManifest(bomb))
    expect(result).toEqual({ ok: false, message: BOMB_MESSAGE })
    expect(turns).toBeGreaterThan(10)
  })

  it('says what is wrong with uploads that are not module tarballs', async () => {
    expect(await readTarballManifest(new TextEncoder().encode('not a tarball'))).toEqual({
      ok: false,
      message: 'The upload is not a gzipped tarball',
    })
    expect(await readTarballManifest(gzipSync(Buffer.alloc(1024)))).toEqual({
      ok: false,
      message: 'The upload holds no package.json',
    })
    expect(await readTarballManifest(await tarball(10, { name: 'x' }))).toEqual({
      ok: false,
      message: 'The package.json in the upload has no name or version',
    })
  })
})

describe('uploading a gzip bomb over the API', () => {
  let userDir: string
  let server: RunningServer | null = null
  beforeEach(async () => {
    userDir = await mkdtemp(path.join(tmpdir(), 'flowadmin-tarball-'))
  })
  afterEach(async () => {
    await server?.close()
    await rm(userDir, { recursive: true, force: true })
  })

  it('answers 400 invalid_request saying it unpacks to too much, and installs nothing', async () => {
    server = await startServer({
      port: 0,
      userDir,
      settings: { storage: 'memory', externalModules: { palette: { allowUpload: true } } },
      stdout: () => {},
      logger: captureLog().logger,
    })
    const form = new FormData()
    form.append('tarball', new Blob([new Uint8Array(await tarball(300 * MIB, null))]), 'module.tgz')
    const res = await fetch(`${server.url}/nodes`, { method: 'POST', body: form })
    expect(res.status).toBe(400)
    expect(await res.json()).toEqual({ code: 'invalid_request', message: BOMB_MESSAGE })
    expect((await fetch(`${server.url}/nodes`)).status).toBe(200)
  })
})
