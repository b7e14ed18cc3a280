import { gunzipSync } from 'node:zlib'

// Reads the package.json of an npm package tarball (a gzipped tar whose files sit in one top
// folder, `package/` by npm's convention), without unpacking anything to disk.

const BLOCK = 512
/** Largest unpacked size read, so a small upload cannot inflate without bound. */
const MAX_UNPACKED = 256 * 1024 * 1024

/** The name and version in the tarball's package.json, or a message saying why there are none. */
export function readTarballManifest(
  bytes: Uint8Array,
): { ok: true; name: string; version: string } | { ok: false; message: string } {
  let tar: Buffer
  try {
    tar = gunzipSync(bytes, { maxOutputLength: MAX_UNPACKED })
  } catch {
    return { ok: false, message: 'The upload is not a gzipped tarball' }
  }
  for (let offset = 0; offset + BLOCK <= tar.length; ) {
    const header = tar.subarray(offset, offset + BLOCK)
    if (header.every((byte) => byte === 0)) break
    const field = (start: number, length: number) =>
      header
        .subarray(start, start + length)
        .toString('utf8')
        .replace(/\0.*$/s, '')
    const size = Number.parseInt(field(124, 12).trim() || '0', 8)
    const type = field(156, 1)
    const prefix = field(345, 155)
    const name = prefix === '' ? field(0, 100) : `${prefix}/${field(0, 100)}`
    if (!Number.isFinite(size) || size < 0) break
    const body = tar.subarray(offset + BLOCK, offset + BLOCK + size)
    if ((type === '0' || type === '') && /^[^/]+\/package\.json$/.test(name)) {
      try {
        const manifest = JSON.parse(body.toString('utf8')) as { name?: unknown; version?: unknown }
        if (typeof manifest.name === 'string' && typeof manifest.version === 'string') {
          return { ok: true, name: manifest.name, version: manifest.version }
        }
      } catch {
        // Reported below.
      }
      return { ok: false, message: 'The package.json in the upload has no name or version' }
    }
    offset += BLOCK + Math.ceil(size / BLOCK) * BLOCK
  }
  return { ok: false, message: 'The upload holds no package.json' }
}
