// Which tarball npm installed, read from the lockfile it wrote: what flowadmin records as vetted.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { artifactOf, installedArtifact } from '../src/adapters/npm-artifact.js'

const SHA512 = `sha512-${'A'.repeat(86)}==`
const URL_OF = 'https://registry.npmjs.org/wave/-/wave-1.0.0.tgz'
const lock = (entry: Record<string, unknown>) =>
  JSON.stringify({ lockfileVersion: 3, packages: { '': {}, 'node_modules/wave': entry } })

let dir: string | undefined
afterEach(async () => {
  if (dir !== undefined) await rm(dir, { recursive: true, force: true })
  dir = undefined
})

describe('the tarball npm installed', () => {
  it('is the lockfile entry’s SHA-512 and http(s) URL, at the version installed', () => {
    const entry = { version: '1.0.0', resolved: URL_OF, integrity: SHA512 }
    expect(artifactOf(entry, '1.0.0')).toEqual({ integrity: SHA512, tarball: URL_OF })
    expect(artifactOf({ ...entry, integrity: `sha1-${'B'.repeat(27)}= ${SHA512}` }, '1.0.0')).toEqual({
      integrity: SHA512,
      tarball: URL_OF,
    })
    expect(artifactOf(entry, '1.0.1')).toBeNull()
    expect(artifactOf({ ...entry, integrity: `sha1-${'B'.repeat(27)}=` }, '1.0.0')).toBeNull()
    expect(artifactOf({ ...entry, resolved: 'file:../wave-1.0.0.tgz' }, '1.0.0')).toBeNull()
    expect(artifactOf({ ...entry, resolved: 'not a url' }, '1.0.0')).toBeNull()
    expect(artifactOf({ version: '1.0.0', integrity: SHA512 }, '1.0.0')).toBeNull()
  })

  it('is read from package-lock.json, else from npm’s hidden lockfile; null without either', async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'flowadmin-artifact-'))
    expect(await installedArtifact(dir, 'wave', '1.0.0')).toBeNull()
    await mkdir(path.join(dir, 'node_modules'))
    await writeFile(
      path.join(dir, 'node_modules', '.package-lock.json'),
      lock({ version: '1.0.0', resolved: URL_OF, integrity: SHA512 }),
    )
    expect(await installedArtifact(dir, 'wave', '1.0.0')).toEqual({ integrity: SHA512, tarball: URL_OF })
    await writeFile(path.join(dir, 'package-lock.json'), '{not json')
    expect(await installedArtifact(dir, 'wave', '1.0.0')).toEqual({ integrity: SHA512, tarball: URL_OF })
    const other = 'https://mirror.example/wave/-/wave-1.0.0.tgz'
    await writeFile(
      path.join(dir, 'package-lock.json'),
      lock({ version: '1.0.0', resolved: other, integrity: SHA512 }),
    )
    expect(await installedArtifact(dir, 'wave', '1.0.0')).toEqual({ integrity: SHA512, tarball: other })
  })
})
