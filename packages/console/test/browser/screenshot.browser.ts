// scripts/console-screenshot.mjs, which makes docs/console.png: run into a temporary file, so the
// README's picture can always be made again from the demo as it is.
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { captureConsole } from '../../../../scripts/console-screenshot.mjs'
import { GREETING, TEXT_TOOLS } from './harness.js'

const REPO = fileURLToPath(new URL('../../../../', import.meta.url))
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/** What git says has changed in the demo's folder (tracked or not, ignored files aside). */
const demoStatus = () =>
  execFileSync('git', ['status', '--porcelain', '--', 'examples/demo'], { cwd: REPO, encoding: 'utf8' })

const scratch = mkdtemp(path.join(tmpdir(), 'flowadmin-shot-'))
afterAll(async () => rm(await scratch, { recursive: true, force: true }))

describe('the console screenshot script', () => {
  it("signs in to a scratch copy of the demo and writes the page at 1440 px; the demo's folder is untouched", async () => {
    const before = demoStatus()
    const out = path.join(await scratch, 'console.png')
    const shot = await captureConsole({ out })

    // The demo's own modules, nothing a test or an API walk added.
    expect(shot.modules).toEqual([TEXT_TOOLS, GREETING])
    const png = await readFile(out)
    expect(png.subarray(0, 8)).toEqual(PNG_SIGNATURE)
    expect(png.readUInt32BE(16)).toBe(1440)
    expect(png.readUInt32BE(20)).toBeGreaterThanOrEqual(900)
    expect({ width: shot.width, height: shot.height }).toEqual({
      width: 1440,
      height: png.readUInt32BE(20),
    })
    expect(existsSync(shot.userDir)).toBe(false)
    expect(demoStatus()).toBe(before)
  })
})
