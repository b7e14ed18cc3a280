import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import * as path from 'node:path'
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CONTENT_SECURITY_POLICY, consolePaths, createConsole } from '../src/index.js'

let dir: string
const SCRIPT = 'console.log("the console")\n'.repeat(20)
const SIGN_IN = 'console.log("the sign-in page")\n'.repeat(20)

beforeEach(async () => {
  dir = await mkdtemp(path.join(tmpdir(), 'flowadmin-console-'))
  await mkdir(path.join(dir, 'console'))
  await writeFile(
    path.join(dir, 'index.html'),
    '<!doctype html><script type="module" src="console/main-abc.js"></script>',
  )
  const script = path.join(dir, 'console', 'main-abc.js')
  await writeFile(script, SCRIPT)
  await writeFile(`${script}.br`, brotliCompressSync(SCRIPT))
  await writeFile(`${script}.gz`, gzipSync(SCRIPT))
  await writeFile(path.join(dir, 'console', 'notes.txt'), 'not an asset')
  const signIn = path.join(dir, 'signin.js')
  await writeFile(signIn, SIGN_IN)
  await writeFile(`${signIn}.br`, brotliCompressSync(SIGN_IN))
  await writeFile(`${signIn}.gz`, gzipSync(SIGN_IN))
})
afterEach(() => rm(dir, { recursive: true, force: true }))

/** The API beside the console: says who answered. */
const api = (request: Request) =>
  new Response(`api ${request.method} ${new URL(request.url).pathname}`, { status: 404 })

function app(basePath = '') {
  const console = createConsole({ basePath, dir }, api)
  if (console === null) throw new Error('not built')
  return console
}

describe('createConsole', () => {
  it('is null when the page has not been built', async () => {
    expect(createConsole({ basePath: '', dir: path.join(dir, 'nothing') }, api)).toBeNull()
  })

  it('serves the page at / under the CSP, never cached without revalidation', async () => {
    const response = await app().request('/')
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(response.headers.get('cache-control')).toBe('no-cache')
    expect(response.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY)
    expect(response.headers.get('referrer-policy')).toBe('no-referrer')
    expect(response.headers.get('strict-transport-security')).toBeNull()
    expect(await response.text()).toContain('console/main-abc.js')
  })

  it('sends an asset brotli- or gzip-compressed as the client accepts, or as it is', async () => {
    const br = await app().request('/console/main-abc.js', {
      headers: { 'accept-encoding': 'gzip, deflate, br' },
    })
    expect(br.headers.get('content-encoding')).toBe('br')
    expect(br.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(br.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    // Not sniffed, not embedded by other sites; the page's own headers (CSP and the rest) are not sent.
    expect(br.headers.get('x-content-type-options')).toBe('nosniff')
    expect(br.headers.get('cross-origin-resource-policy')).toBe('same-origin')
    expect(br.headers.get('content-security-policy')).toBeNull()
    expect(br.headers.get('x-frame-options')).toBeNull()
    expect(brotliDecompressSync(Buffer.from(await br.arrayBuffer())).toString()).toBe(SCRIPT)

    const gzip = await app().request('/console/main-abc.js', { headers: { 'accept-encoding': 'gzip' } })
    expect(gzip.headers.get('content-encoding')).toBe('gzip')
    expect(gunzipSync(Buffer.from(await gzip.arrayBuffer())).toString()).toBe(SCRIPT)

    const plain = await app().request('/console/main-abc.js', {
      headers: { 'accept-encoding': 'brotli-ish' },
    })
    expect(plain.headers.get('content-encoding')).toBeNull()
    expect(await plain.text()).toBe(SCRIPT)
    expect(plain.headers.get('vary')).toBe('Accept-Encoding')
  })

  it("serves the sign-in page's script at /signin.js as JavaScript, revalidated by its ETag", async () => {
    for (const [base, target] of [
      ['', '/signin.js'],
      ['/admin', '/admin/signin.js'],
    ] as const) {
      const response = await app(base).request(target, { headers: { 'accept-encoding': 'br' } })
      expect(response.status).toBe(200)
      expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
      expect(response.headers.get('content-encoding')).toBe('br')
      // Its name has no hash: a new build must reach browsers at their next load.
      expect(response.headers.get('cache-control')).toBe('no-cache')
      expect(response.headers.get('x-content-type-options')).toBe('nosniff')
      expect(response.headers.get('cross-origin-resource-policy')).toBe('same-origin')
      expect(response.headers.get('content-security-policy')).toBeNull()
      expect(brotliDecompressSync(Buffer.from(await response.arrayBuffer())).toString()).toBe(SIGN_IN)
      const etag = response.headers.get('etag') ?? ''
      expect(etag).toMatch(/^W\/"[A-Za-z0-9_-]{22}"$/)

      const again = await app(base).request(target, { headers: { 'if-none-match': etag } })
      expect(again.status).toBe(304)
      expect(again.headers.get('etag')).toBe(etag)
      expect(await again.text()).toBe('')
      const changed = await app(base).request(target, { headers: { 'if-none-match': 'W/"older"' } })
      expect(changed.status).toBe(200)
      expect(await changed.text()).toBe(SIGN_IN)
    }
    // Only there: not as an asset, not below the page's assets, not at the root below a basePath.
    expect(await (await app().request('/console/signin.js')).text()).toBe('api GET /console/signin.js')
    expect(await (await app('/admin').request('/signin.js')).text()).toBe('api GET /signin.js')
  })

  it('allows data: images only, for the QR code of a new second factor', () => {
    const images = CONTENT_SECURITY_POLICY.split('; ').find((directive) => directive.startsWith('img-src '))
    expect(images).toBe("img-src 'self' data:")
    expect(CONTENT_SECURITY_POLICY.match(/data:/g)).toHaveLength(1)
  })

  it('answers HEAD like GET without a body', async () => {
    const response = await app().request('/console/main-abc.js', { method: 'HEAD' })
    expect(response.status).toBe(200)
    expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    expect(await response.text()).toBe('')
  })

  it('leaves everything else to the API: unknown assets, other types, other methods and paths', async () => {
    for (const [method, target] of [
      ['GET', '/console/main-zzz.js'],
      ['GET', '/console/notes.txt'],
      ['GET', '/console/index.html'],
      ['GET', '/console/'],
      ['GET', '/nodes'],
      ['POST', '/'],
      ['PUT', '/console/main-abc.js'],
    ] as const) {
      const response = await app().request(target, { method })
      expect(response.status).toBe(404)
      expect(await response.text()).toBe(`api ${method} ${target}`)
    }
  })

  it('below a basePath: the page at <basePath>/, <basePath> redirects there, / is the API', async () => {
    const below = app('/admin')
    expect((await below.request('/admin/')).status).toBe(200)
    expect((await below.request('/admin/console/main-abc.js')).status).toBe(200)
    const bare = await below.request('/admin')
    expect(bare.status).toBe(308)
    expect(bare.headers.get('location')).toBe('/admin/')
    expect(await (await below.request('/')).text()).toBe('api GET /')
    expect(await (await below.request('/console/main-abc.js')).text()).toBe('api GET /console/main-abc.js')
  })
})

describe('consolePaths', () => {
  it('claims the page, its redirect and its assets, and leaves every API path alone', () => {
    for (const [base, owned] of [
      ['', ['/', '/console/main-abc.js', '/console/', '/signin.js']],
      ['/admin', ['/admin', '/admin/', '/admin/console/main-abc.js', '/admin/signin.js']],
      ['/admin/', ['/admin', '/admin/', '/admin/console/x.css']],
      // As the API takes its root: the leading slash added, every trailing one dropped.
      ['admin//', ['/admin', '/admin/', '/admin/console/x.css']],
      ['/', ['/', '/console/main-abc.js']],
    ] as const) {
      for (const requestPath of owned)
        expect(consolePaths(base)(requestPath), `${base} ${requestPath}`).toBe(true)
    }
    for (const [base, other] of [
      ['', ['/auth/login', '/settings', '/nodes/console', '/consolex', '/console', '/signin.jsx']],
      ['/admin', ['/admin/auth/login', '/admin/nodes', '/', '/console/main-abc.js', '/adminx', '/signin.js']],
    ] as const) {
      for (const requestPath of other)
        expect(consolePaths(base)(requestPath), `${base} ${requestPath}`).toBe(false)
    }
  })
})
