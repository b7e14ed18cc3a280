// npm tarballs for the tests: a gzipped tar holding `package/package.json`, as `npm pack` makes
// one, and the reading of that package.json back, as Node-RED does with an upload.
import { createHash } from 'node:crypto'
import { gunzipSync, gzipSync } from 'node:zlib'

const BLOCK = 512

function header(name: string, size: number): Buffer {
  const block = Buffer.alloc(BLOCK)
  block.write(name, 0, 100, 'utf8')
  block.write('0000644\0', 100)
  block.write('0000000\0', 108)
  block.write('0000000\0', 116)
  block.write(`${size.toString(8).padStart(11, '0')}\0`, 124)
  block.write('00000000000\0', 136)
  block.write('        ', 148)
  block.write('0', 156)
  block.write('ustar\u000000', 257)
  let sum = 0
  for (const byte of block) sum += byte
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148)
  return block
}

/** A package's tarball; `extra` fields go in its package.json (a different one: other bytes). */
export function tarballOf(name: string, version: string, extra: Record<string, unknown> = {}): Buffer {
  const manifest = Buffer.from(JSON.stringify({ name, version, ...extra }))
  const padding = Buffer.alloc((BLOCK - (manifest.length % BLOCK)) % BLOCK)
  return gzipSync(
    Buffer.concat([
      header('package/package.json', manifest.length),
      manifest,
      padding,
      Buffer.alloc(2 * BLOCK),
    ]),
  )
}

/** The package.json of a tarball, or null when it holds none. */
export function manifestOf(tarball: Buffer): { name: string; version: string } | null {
  let tar: Buffer
  try {
    tar = gunzipSync(tarball)
  } catch {
    return null
  }
  for (let at = 0; at + BLOCK <= tar.length; ) {
    const name = tar
      .subarray(at, at + 100)
      .toString('utf8')
      .replace(/\0.*$/s, '')
    if (name === '') return null
    const size = Number.parseInt(
      tar
        .subarray(at + 124, at + 136)
        .toString('utf8')
        .replace(/\0.*$/s, ''),
      8,
    )
    if (name === 'package/package.json') {
      return JSON.parse(tar.subarray(at + BLOCK, at + BLOCK + size).toString('utf8')) as {
        name: string
        version: string
      }
    }
    at += BLOCK + Math.ceil(size / BLOCK) * BLOCK
  }
  return null
}

/** Its integrity as npm writes it: `sha512-` and the base64 of its SHA-512. */
export const integrityOf = (bytes: Buffer) => `sha512-${createHash('sha512').update(bytes).digest('base64')}`
