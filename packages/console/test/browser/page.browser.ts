// What the server sends for the page and its assets: security headers, caching, size.
import { readFile } from 'node:fs/promises'
import { describe, expect, it } from 'vitest'
import { open, useBrowserAndServer, useServer } from './harness.js'

const env = useBrowserAndServer()

/** The CSP as a map of directive to its sources. */
function directives(policy: string): Map<string, string[]> {
  return new Map(
    policy
      .split(';')
      .map((part) => part.trim().split(/\s+/))
      .filter((words) => words[0] !== '')
      .map(([name, ...sources]) => [name as string, sources]),
  )
}

describe('the page', () => {
  it('is sent with a strict Content-Security-Policy and the other security headers', async () => {
    const response = await fetch(`${env.server.url}/`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(response.headers.get('cache-control')).toBe('no-cache')
    expect(response.headers.get('x-content-type-options')).toBe('nosniff')
    expect(response.headers.get('referrer-policy')).toBe('no-referrer')
    expect(response.headers.get('x-frame-options')).toBe('DENY')
    const policy = response.headers.get('content-security-policy') ?? ''
    const csp = directives(policy)
    expect(csp.get('default-src')).toEqual(["'none'"])
    expect(csp.get('script-src')).toEqual(["'self'"])
    expect(csp.get('frame-ancestors')).toEqual(["'none'"])
    expect(csp.get('base-uri')).toEqual(["'none'"])
    expect(csp.get('connect-src')).toEqual(["'self'"])
    expect(policy).not.toMatch(/unsafe-inline|unsafe-eval/)
    // Images may also be data: URLs (the QR code of a new second factor, drawn by flowadmin).
    expect(csp.get('img-src')).toEqual(["'self'", 'data:'])
    // The page needs nothing from another origin: no CDN, no external font.
    for (const [name, sources] of csp) {
      for (const source of sources) {
        if (name !== 'img-src' || source !== 'data:') expect(source).toMatch(/^'(self|none|script)'$/)
      }
    }
  })

  it('has no inline script, no inline handler, no inline style, and names only its own assets', async () => {
    const html = await (await fetch(`${env.server.url}/`)).text()
    const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)]
    expect(scripts).toHaveLength(1)
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/\bsrc="console\/main-[A-Za-z0-9_-]{10}\.js"/)
      expect(body?.trim()).toBe('')
    }
    expect(html).not.toMatch(/\son[a-z]+\s*=/i)
    expect(html).not.toMatch(/<style|\sstyle\s*=/i)
    expect(html).not.toMatch(/https?:\/\//)
  })

  it('its assets have hashed names, are cached for a year, and the first paint is under 100 KB compressed', async () => {
    const html = await (await fetch(`${env.server.url}/`)).text()
    const assets = [...html.matchAll(/(?:src|href)="(console\/[^"]+)"/g)].map((match) => match[1] as string)
    expect(assets.map((asset) => asset.replace(/-[A-Za-z0-9_-]{10}\./, '-HASH.'))).toEqual([
      'console/icon-HASH.svg',
      'console/style-HASH.css',
      'console/main-HASH.js',
    ])
    let compressed = Number(
      (await fetch(`${env.server.url}/`, { headers: { 'accept-encoding': 'br' } })).headers.get(
        'content-length',
      ),
    )
    for (const asset of assets) {
      const response = await fetch(`${env.server.url}/${asset}`, { headers: { 'accept-encoding': 'br' } })
      expect(response.status).toBe(200)
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
      expect(response.headers.get('x-content-type-options')).toBe('nosniff')
      expect(response.headers.get('vary')).toBe('Accept-Encoding')
      compressed += Number(response.headers.get('content-length'))
    }
    expect(compressed).toBeGreaterThan(1_000)
    expect(compressed).toBeLessThan(100 * 1024)
    const sizes = JSON.parse(
      await readFile(new URL('../../dist/public/sizes.json', import.meta.url), 'utf8'),
    ) as { totalBrotli: number }
    expect(sizes.totalBrotli).toBe(compressed)

    // An asset that is not there is the API's 404; the page is never served under another name.
    const missing = await fetch(`${env.server.url}/console/main-0000000000.js`)
    expect(missing.status).toBe(404)
    expect(await missing.text()).toBe('')
    expect((await fetch(`${env.server.url}/console/index.html`)).status).toBe(404)
  })

  it("serves the sign-in page's script at /signin.js, beside the API", async () => {
    const response = await fetch(`${env.server.url}/signin.js`)
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/javascript; charset=utf-8')
    expect(response.headers.get('cache-control')).toBe('no-cache')
    const etag = response.headers.get('etag') as string
    expect(await response.text()).toContain('passkey-signin')
    const again = await fetch(`${env.server.url}/signin.js`, { headers: { 'if-none-match': etag } })
    expect(again.status).toBe(304)
  })

  it('loads in Chromium without a CSP or Trusted Types refusal, and keeps the API working beside it', async () => {
    const { page, problems, context } = await open(env.browser, `${env.server.url}/`)
    await page.getByLabel('Username').waitFor()
    expect(problems).toEqual([])
    await context.close()
    const scheme = await fetch(`${env.server.url}/auth/login`)
    expect(scheme.status).toBe(200)
    expect(((await scheme.json()) as { type: string }).type).toBe('credentials')
  })
})

describe('below httpAdminRoot', () => {
  const below = useServer({ extra: { httpAdminRoot: '/admin' } })

  it('the page is at <httpAdminRoot>/ and calls the API there', async () => {
    const base = below.server.url
    expect(base).toMatch(/\/admin$/)
    const bare = await fetch(base, { redirect: 'manual' })
    expect(bare.status).toBe(308)
    expect(bare.headers.get('location')).toBe('/admin/')
    const root = await fetch(new URL('/', base))
    expect(root.status).toBe(404)
    const script = await fetch(`${base}/signin.js`)
    expect(script.status).toBe(200)
    expect(script.headers.get('content-type')).toBe('text/javascript; charset=utf-8')

    const { page, problems, context } = await open(env.browser, base)
    expect(page.url()).toBe(`${base}/`)
    await page.getByLabel('Username').waitFor()
    expect(problems).toEqual([])
    await context.close()
  })
})

describe('"console": false', () => {
  const off = useServer({ extra: { console: false } })

  it('turns the page off: / is a 404 and the API answers as before', async () => {
    const response = await fetch(`${off.server.url}/`)
    expect(response.status).toBe(404)
    expect(await response.text()).toBe('')
    expect(response.headers.get('content-security-policy')).toBeNull()
    const html = await fetch(`${env.server.url}/`)
    const asset = /src="(console\/[^"]+)"/.exec(await html.text())?.[1]
    expect((await fetch(`${off.server.url}/${asset}`)).status).toBe(404)
    expect((await fetch(`${off.server.url}/auth/login`)).status).toBe(200)
  })
})
