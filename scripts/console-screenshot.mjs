#!/usr/bin/env node
// The console's picture in the READMEs (docs/console.png): the demo of `pnpm start`, signed in as
// its admin, at 1440 px in the light scheme. The built command serves a scratch copy of
// examples/demo in a temporary folder (its SQLite file and anything else it writes go there, and
// the folder is removed), and Debian's Chromium takes the picture through playwright-core.
//
//   pnpm build && node scripts/console-screenshot.mjs [--out docs/console.png]
import { execFileSync, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { parseArgs } from 'node:util'
import { chromium } from 'playwright-core'

const REPO = fileURLToPath(new URL('../', import.meta.url))
const DEMO = 'examples/demo'
const BIN = path.join(REPO, 'packages/server/bin/flowadmin.cjs')
const BUILT = ['packages/server/dist/cli/main.js', 'packages/console/dist/public/index.html']
const CHROMIUM = '/usr/bin/chromium'
/** Keep Chromium off the network: without them it tries Google's services and hangs offline. */
const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]
/** The demo's admin, as the README gives it. */
const DEMO_USER = { username: 'admin', password: 'flowadmin-demo' }
const WAIT_MS = 30_000

/**
 * Copies the demo as the repository tracks it (not what a walk through the API left beside it:
 * an installed module, a database) into a new temporary folder; returns that folder.
 */
async function scratchDemo() {
  const dir = await mkdtemp(path.join(tmpdir(), 'flowadmin-console-screenshot-'))
  const files = execFileSync('git', ['ls-files', '-z', '--', DEMO], { cwd: REPO, encoding: 'utf8' })
    .split('\0')
    .filter((file) => file !== '')
  if (!files.includes(`${DEMO}/settings.json`)) {
    await rm(dir, { recursive: true, force: true })
    throw new Error(`${DEMO}/settings.json is not in this checkout`)
  }
  for (const file of files) {
    const target = path.join(dir, path.relative(DEMO, file))
    await mkdir(path.dirname(target), { recursive: true })
    await cp(path.join(REPO, file), target)
  }
  return dir
}

/** Starts the built command on `settings`; resolves with its URL and a stop that waits for its end. */
async function startServer(settings) {
  const child = spawn(process.execPath, [BIN, 'start', '--settings', settings, '--port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // The demo's second-factor key is published: flowadmin takes it only when told so.
    env: { ...process.env, NO_COLOR: '1', FLOWADMIN_ALLOW_EXAMPLE_MFA_KEY: '1' },
  })
  const exited = new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? signal)))
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await exited
  }
  let stdout = ''
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk) => {
    stderr += chunk
  })
  try {
    const url = await new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the server did not listen within ${WAIT_MS} ms`)),
        WAIT_MS,
      )
      // Read to the end, listening or not: the demo's audit log goes to stdout too.
      child.stdout.setEncoding('utf8').on('data', (chunk) => {
        if (stdout === null) return
        stdout += chunk
        const found = /^flowadmin listening on (http:\/\/\S+)/m.exec(stdout)
        if (found === null) return
        stdout = null
        clearTimeout(timer)
        resolve(found[1])
      })
      exited.then((code) => {
        clearTimeout(timer)
        reject(new Error(`the server ended (${code}) before it listened:\n${stderr}`))
      })
    })
    return { url, stop }
  } catch (error) {
    await stop()
    throw error
  }
}

/**
 * Signs in to a scratch copy of the demo and writes the console's picture, `width` px wide and as
 * tall as the page, to `out`. Resolves with the module names the page showed, the picture's size
 * and the scratch folder (removed by then).
 */
export async function captureConsole({ out, width = 1440, height = 900 }) {
  const missing = BUILT.filter((file) => !existsSync(path.join(REPO, file)))
  if (missing.length > 0) throw new Error(`${missing.join(', ')} is missing: run \`pnpm build\` first`)
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium`)

  const userDir = await scratchDemo()
  let server
  let browser
  try {
    server = await startServer(path.join(userDir, 'settings.json'))
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_FLAGS })
    const page = await browser.newPage({ viewport: { width, height }, colorScheme: 'light' })
    page.setDefaultTimeout(WAIT_MS)
    await page.goto(`${server.url}/`)
    await page.getByLabel('Username').fill(DEMO_USER.username)
    await page.getByLabel('Password').fill(DEMO_USER.password)
    await page.getByLabel('Password').press('Enter')
    const names = page.locator('ul.cards h3')
    await names.first().waitFor()
    const modules = await names.allTextContents()
    // Nothing focused: the picture shows the page at rest.
    await page.evaluate(() =>
      document.activeElement instanceof HTMLElement ? document.activeElement.blur() : undefined,
    )
    await mkdir(path.dirname(path.resolve(out)), { recursive: true })
    const png = await page.screenshot({ path: out, fullPage: true, animations: 'disabled' })
    return { modules, width: png.readUInt32BE(16), height: png.readUInt32BE(20), userDir }
  } finally {
    await browser?.close()
    await server?.stop()
    await rm(userDir, { recursive: true, force: true })
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { values } = parseArgs({
    options: { out: { type: 'string', default: path.join(REPO, 'docs/console.png') } },
  })
  try {
    const shot = await captureConsole({ out: values.out })
    console.log(
      `wrote ${path.relative(process.cwd(), values.out) || values.out} (${shot.width}×${shot.height} px): ${shot.modules.join(', ')}`,
    )
  } catch (error) {
    console.error(`console-screenshot: ${error instanceof Error ? error.message : String(error)}`)
    process.exitCode = 1
  }
}
