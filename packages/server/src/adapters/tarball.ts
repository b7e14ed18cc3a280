import { createGunzip } from 'node:zlib'

// Reads the package.json of an npm package tarball (a gzipped tar whose files sit in one top
// folder, `package/` by npm's convention), without unpacking anything to disk. The upload is
// unpacked as a stream, on libuv's thread pool a piece at a time, so the event loop keeps
// answering other requests meanwhile; it stops at the package.json, or at the size limit.

const BLOCK = 512
/** Largest unpacked size read, so a small upload cannot inflate without bound (a gzip bomb). */
const MAX_UNPACKED = 256 * 1024 * 1024

export type TarballManifest = { ok: true; name: string; version: string } | { ok: false; message: string }

const refused = (message: string): TarballManifest => ({ ok: false, message })
const NO_MANIFEST = refused('The upload holds no package.json')

/** The name and version in the tarball's package.json, or a message saying why there are none. */
export async function readTarballManifest(bytes: Uint8Array): Promise<TarballManifest> {
  const gunzip = createGunzip()
  gunzip.end(bytes)
  const scan = createTarScanner()
  let unpacked = 0
  try {
    // Leaving the loop early destroys the stream: nothing more is unpacked.
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      unpacked += chunk.length
      if (unpacked > MAX_UNPACKED) {
        return refused(`The upload unpacks to more than ${MAX_UNPACKED / 1024 / 1024} MiB`)
      }
      const verdict = scan(chunk)
      if (verdict !== null) return verdict
    }
  } catch {
    return refused('The upload is not a gzipped tarball')
  }
  return NO_MANIFEST
}

/**
 * Reads tar entries as their bytes arrive, keeping only a header or the package.json being read:
 * the verdict once the top folder's package.json is read or the archive ends, else null.
 */
function createTarScanner(): (chunk: Buffer) => TarballManifest | null {
  let pending: Buffer = Buffer.alloc(0)
  /** Bytes of the current entry's body (and padding) still to pass over. */
  let skip = 0
  /** The size of package.json's body while it is being read. */
  let manifestSize: number | null = null
  return (chunk) => {
    const passed = Math.min(skip, chunk.length)
    skip -= passed
    const rest = chunk.subarray(passed)
    pending = pending.length === 0 ? rest : Buffer.concat([pending, rest])
    for (;;) {
      if (manifestSize !== null) {
        return pending.length < manifestSize ? null : manifestOf(pending.subarray(0, manifestSize))
      }
      if (pending.length < BLOCK) return null
      const entry = parseHeader(pending.subarray(0, BLOCK))
      if (entry === null) return NO_MANIFEST
      pending = pending.subarray(BLOCK)
      if ((entry.type === '0' || entry.type === '') && /^[^/]+\/package\.json$/.test(entry.name)) {
        manifestSize = entry.size
        continue
      }
      const body = Math.ceil(entry.size / BLOCK) * BLOCK
      const here = Math.min(body, pending.length)
      pending = pending.subarray(here)
      skip = body - here
    }
  }
}

/** The name, type and size of a tar header block; null for the end of the archive or a broken size. */
function parseHeader(header: Buffer): { name: string; type: string; size: number } | null {
  if (header.every((byte) => byte === 0)) return null
  const field = (start: number, length: number) =>
    header
      .subarray(start, start + length)
      .toString('utf8')
      .replace(/\0.*$/s, '')
  const size = Number.parseInt(field(124, 12).trim() || '0', 8)
  if (!Number.isFinite(size) || size < 0) return null
  const prefix = field(345, 155)
  const name = prefix === '' ? field(0, 100) : `${prefix}/${field(0, 100)}`
  return { name, type: field(156, 1), size }
}

function manifestOf(body: Buffer): TarballManifest {
  try {
    const manifest = JSON.parse(body.toString('utf8')) as { name?: unknown; version?: unknown }
    if (typeof manifest.name === 'string' && typeof manifest.version === 'string') {
      return { ok: true, name: manifest.name, version: manifest.version }
    }
  } catch {
    // Reported below.
  }
  return refused('The package.json in the upload has no name or version')
}
