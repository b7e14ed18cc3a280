// An install flowadmin vetted: the agent downloads the tarball itself, checks its SHA-512 against
// the integrity flowadmin recorded, and only on a match uploads it to its Node-RED. A tarball that
// is not the one vetted, too large, or refused by Node-RED's settings is reported, never retried
// until the desired state changes.
import { createRequire } from 'node:module'
import { waitFor } from '@flowadmin/testkit'
import { afterEach, describe, expect, test } from 'vitest'
import { desiredState, type FleetInstance, startFleetInstance } from './fleet-setup.js'
import { startForwardProxy } from './forward-proxy.js'
import type { TarballLength } from './stub-flowadmin.js'
import { integrityOf, tarballOf } from './tarball-fixture.js'

const require = createRequire(import.meta.url)
const { fetchVetted, MAX_TARBALL_BYTES } = require('../lib/fleet-tarball.js') as {
  fetchVetted(entry: object, options?: { maxBytes?: number }): Promise<{ bytes?: Buffer; refused?: string }>
  MAX_TARBALL_BYTES: number
}

let fleet: FleetInstance | undefined
afterEach(async () => {
  await fleet?.close()
  fleet = undefined
})

const VETTED = tarballOf('wave', '1.0.0')
/** The same name and version, other bytes: what a registry that changed its mind serves. */
const OTHER = tarballOf('wave', '1.0.0', { description: 'not what flowadmin vetted' })

/** An instance with no modules, and flowadmin asking it to install wave 1.0.0 served as `served`. */
async function instanceInstalling(served: Buffer, length?: TarballLength) {
  fleet = await startFleetInstance({ hold: 1 })
  const tarball = fleet.stub.fleet.serveTarball('wave-1.0.0.tgz', served, length)
  const entry = { module: 'wave', version: '1.0.0', integrity: integrityOf(VETTED), tarball }
  fleet.stub.fleet.setDesired(desiredState('2', { installs: [entry] }))
  return { instance: fleet, entry }
}

/** The failures of the first report that applied `version` (with a failure to `action`, if given). */
async function failuresAt(instance: FleetInstance, version: string, action?: string) {
  const applied = (report: Record<string, unknown>) =>
    report.applied === version &&
    (action === undefined || JSON.stringify(report.failures).includes(`"action":"${action}"`))
  await waitFor(
    () => instance.reports().some(applied),
    () => `reports: ${JSON.stringify(instance.reports())}`,
  )
  return instance.reports().find(applied)?.failures
}

describe('installs of the tarball flowadmin vetted', () => {
  test('a tarball whose SHA-512 is the integrity is uploaded to Node-RED, which installs it', async () => {
    const { instance } = await instanceInstalling(VETTED)
    expect(await failuresAt(instance, '2')).toEqual([])
    expect(instance.nodeRed.changes()).toEqual([
      expect.stringMatching(/^POST \/nodes \(upload of \d+ bytes\)$/),
    ])
    expect(instance.nodeRed.uploaded).toEqual([VETTED])
    expect(instance.nodeRed.modules.get('wave')?.version).toBe('1.0.0')
    // Downloaded from the URL flowadmin sent, as the helper calls flowadmin (its own transport).
    const download = instance.stub.to('/tarballs/wave-1.0.0.tgz')
    expect(download.map((r) => r.userAgent)).toEqual([expect.stringMatching(/^flowadmin-node-red\//)])
  })

  test('another tarball under the same name and version: nothing reaches Node-RED, the failure reported and logged once, not tried again', async () => {
    const { instance } = await instanceInstalling(OTHER)
    const message =
      'integrity mismatch: the registry served another tarball than flowadmin vetted (wave@1.0.0 at ' +
      `${instance.stub.url}/tarballs/wave-1.0.0.tgz): not installed`
    expect(await failuresAt(instance, '2')).toEqual([{ module: 'wave', action: 'install', message }])
    expect(instance.nodeRed.changes()).toEqual([])
    expect(instance.nodeRed.modules.has('wave')).toBe(false)
    // A hand change to a module the desired state decides runs the applier again: the refusal is
    // reported again (now an upgrade), the tarball not downloaded again.
    instance.nodeRed.byHand.install('wave', '0.9.0', 'alice')
    expect(await failuresAt(instance, '2', 'upgrade')).toEqual([
      { module: 'wave', action: 'upgrade', message },
    ])
    expect(instance.stub.to('/tarballs/wave-1.0.0.tgz')).toHaveLength(1)
    expect(instance.settings.lines.filter((line) => line.includes('integrity mismatch'))).toEqual([
      `fleet: ${message}`,
    ])
  })

  test('Node-RED’s settings turn uploads off: the failure says so', async () => {
    fleet = await startFleetInstance({ hold: 1 })
    fleet.nodeRed.setUploads(false)
    const tarball = fleet.stub.fleet.serveTarball('wave-1.0.0.tgz', VETTED)
    const entry = { module: 'wave', version: '1.0.0', integrity: integrityOf(VETTED), tarball }
    fleet.stub.fleet.setDesired(desiredState('2', { installs: [entry] }))
    expect(await failuresAt(fleet, '2')).toEqual([
      {
        module: 'wave',
        action: 'install',
        message:
          'Node-RED refused the upload of the tarball flowadmin vetted: its palette uploads are off (externalModules.palette.allowUpload or editorTheme.palette.upload is false); installs from flowadmin need them on',
      },
    ])
    expect(fleet.nodeRed.modules.has('wave')).toBe(false)
  })

  test('a tarball said to be larger than the bound is not downloaded', async () => {
    const { instance } = await instanceInstalling(VETTED, MAX_TARBALL_BYTES + 1)
    expect(await failuresAt(instance, '2')).toEqual([
      {
        module: 'wave',
        action: 'install',
        message: `the tarball at ${instance.stub.url}/tarballs/wave-1.0.0.tgz is larger than ${MAX_TARBALL_BYTES} bytes: not installed`,
      },
    ])
    expect(instance.nodeRed.changes()).toEqual([])
  })

  test('a tarball sent past the bound without saying its length is cut there', async () => {
    const { instance, entry } = await instanceInstalling(VETTED)
    const small = await fetchVetted(entry, { maxBytes: VETTED.length })
    expect(small.bytes).toEqual(VETTED)
    const cut = await fetchVetted(
      { ...entry, tarball: instance.stub.fleet.serveTarball('big.tgz', Buffer.alloc(200_000), 'unsaid') },
      { maxBytes: 100_000 },
    )
    expect(cut).toEqual({
      refused: `the tarball at ${instance.stub.url}/tarballs/big.tgz is larger than 100000 bytes: not installed`,
    })
  })

  test('a registry’s redirect to its storage is followed; a redirect to no URL is refused', async () => {
    const { instance, entry } = await instanceInstalling(VETTED)
    const moved = instance.stub.fleet.redirect('wave-1.0.0.tgz', '/tarballs/wave-1.0.0.tgz')
    expect((await fetchVetted({ ...entry, tarball: moved })).bytes).toEqual(VETTED)
    const nowhere = instance.stub.fleet.redirect('nowhere.tgz', 'http://[nowhere')
    expect(await fetchVetted({ ...entry, tarball: nowhere })).toEqual({
      refused: 'the tarball was redirected to no URL: not installed',
    })
    const loop = instance.stub.fleet.redirect('loop.tgz', '/moved/loop.tgz')
    expect(await fetchVetted({ ...entry, tarball: `${loop}?token=secret` })).toEqual({
      refused: `the tarball at ${loop} redirects more than 5 times`,
    })
  })

  test('the download goes through the forward proxy the environment names', async () => {
    const { instance, entry } = await instanceInstalling(VETTED)
    const proxy = await startForwardProxy()
    const names = ['HTTP_PROXY', 'http_proxy', 'NO_PROXY', 'no_proxy']
    const saved = names.map((name) => [name, process.env[name]] as const)
    try {
      for (const name of names) delete process.env[name]
      process.env.HTTP_PROXY = proxy.url
      expect((await fetchVetted(entry)).bytes).toEqual(VETTED)
      expect(proxy.seen).toContainEqual(
        expect.objectContaining({ method: 'GET', target: `${instance.stub.url}/tarballs/wave-1.0.0.tgz` }),
      )
    } finally {
      for (const [name, value] of saved) {
        if (value === undefined) delete process.env[name]
        else process.env[name] = value
      }
      await proxy.close()
    }
  })

  test('an integrity that is not a SHA-512 is refused, not installed by name', async () => {
    fleet = await startFleetInstance({ hold: 1 })
    const tarball = fleet.stub.fleet.serveTarball('wave-1.0.0.tgz', VETTED)
    const sha1 = `sha1-${Buffer.alloc(20).toString('base64')}`
    fleet.stub.fleet.setDesired(
      desiredState('2', { installs: [{ module: 'wave', version: '1.0.0', integrity: sha1, tarball }] }),
    )
    expect(await failuresAt(fleet, '2')).toEqual([
      {
        module: 'wave',
        action: 'install',
        message: 'the integrity flowadmin sent is not a SHA-512: not installed',
      },
    ])
    expect(fleet.nodeRed.changes()).toEqual([])
  })
})

describe('the desired state the poll takes', () => {
  const { isDesired } = require('../lib/fleet-poll.js') as { isDesired(body: unknown): boolean }
  const withInstall = (entry: object) => ({ ...desiredState('3'), installs: [entry] })

  test('takes installs with or without a vetted tarball, and refuses ones whose integrity or URL is not text', () => {
    const tarball = 'https://registry.example/wave/-/wave-1.0.0.tgz'
    expect(isDesired(withInstall({ module: 'wave', version: '1.0.0' }))).toBe(true)
    expect(
      isDesired(withInstall({ module: 'wave', version: '1.0.0', integrity: integrityOf(VETTED), tarball })),
    ).toBe(true)
    expect(isDesired(withInstall({ module: 'wave', version: '1.0.0', integrity: 42, tarball }))).toBe(false)
    expect(isDesired(withInstall({ module: 'wave', version: '1.0.0', integrity: 'x', tarball: {} }))).toBe(
      false,
    )
  })
})
