import { createHash } from 'node:crypto'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import * as path from 'node:path'
import { fileURLToPath } from 'node:url'
import { normaliseBasePath } from '@flowadmin/adapter-http'
import { type Context, Hono } from 'hono'
import { secureHeaders } from 'hono/secure-headers'

/** Where the page's assets are served, below the page's own path. */
export const CONSOLE_ASSETS_PREFIX = 'console/'

/**
 * The script of the server's sign-in page, served at `<basePath>/signin.js`: that page names it
 * without a hash, so it is revalidated (by its ETag) instead of cached for a year.
 */
export const SIGN_IN_SCRIPT = 'signin.js'

/** The folder `pnpm build` writes the page and its assets to. */
const BUILT = fileURLToPath(new URL('../dist/public', import.meta.url))

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.html': 'text/html; charset=utf-8',
}

/** Compressed variants made at build time, best first. */
const ENCODINGS = [
  { name: 'br', suffix: '.br' },
  { name: 'gzip', suffix: '.gz' },
] as const

interface StaticFile {
  type: string
  body: Uint8Array
  encoded: Partial<Record<(typeof ENCODINGS)[number]['name'], Uint8Array>>
}

const CSP = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  // data: for the QR code of a new TOTP secret, an SVG that flowadmin draws.
  imgSrc: ["'self'", 'data:'],
  connectSrc: ["'self'"],
  baseUri: ["'none'"],
  formAction: ["'none'"],
  frameAncestors: ["'none'"],
  requireTrustedTypesFor: ["'script'"],
  trustedTypes: ["'none'"],
}

/** The Content-Security-Policy header of the page, as sent. */
export const CONTENT_SECURITY_POLICY = Object.entries(CSP)
  .map(([name, values]) => `${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} ${values.join(' ')}`)
  .join('; ')

export interface ConsoleOptions {
  /** The API's prefix (`httpAdminRoot`), e.g. '/admin', or ''. The page is served at `<basePath>/`. */
  basePath: string
  /** Where the built page is; default this package's `dist/public`. */
  dir?: string
}

/** The built page: the page itself, its assets by name, and the sign-in page's script with its ETag. */
interface Built {
  page: StaticFile | undefined
  assets: Map<string, StaticFile>
  signIn: { file: StaticFile; tag: string } | undefined
}

function readFiles(dir: string): Built {
  const files = new Map<string, StaticFile>()
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) {
    const type = TYPES[path.extname(name)]
    if (type === undefined) continue
    const file = path.join(dir, name)
    const encoded: StaticFile['encoded'] = {}
    for (const { name: encoding, suffix } of ENCODINGS) {
      if (existsSync(file + suffix)) encoded[encoding] = readFileSync(file + suffix)
    }
    files.set(name.split(path.sep).join('/'), { type, body: readFileSync(file), encoded })
  }
  const assets = new Map<string, StaticFile>()
  for (const [name, file] of files) {
    const asset = name.slice(CONSOLE_ASSETS_PREFIX.length)
    if (name.startsWith(CONSOLE_ASSETS_PREFIX) && !asset.includes('/')) assets.set(asset, file)
  }
  const signIn = files.get(SIGN_IN_SCRIPT)
  return {
    page: files.get('index.html'),
    assets,
    signIn: signIn && {
      file: signIn,
      // Weak in use: one tag for the content, whichever encoding it is sent in.
      tag: `"${createHash('sha256').update(signIn.body).digest('base64url').slice(0, 22)}"`,
    },
  }
}

/** The body that fits the request's Accept-Encoding, with the headers that say so. */
function send(c: Context, file: StaticFile): Response {
  c.header('Content-Type', file.type)
  c.header('Vary', 'Accept-Encoding')
  const accepted = (c.req.header('Accept-Encoding') ?? '').toLowerCase()
  for (const { name } of ENCODINGS) {
    const body = file.encoded[name]
    if (body !== undefined && new RegExp(`(^|[ ,])${name}($|[ ,;])`).test(accepted)) {
      c.header('Content-Encoding', name)
      return c.body(body as Uint8Array<ArrayBuffer>)
    }
  }
  return c.body(file.body as Uint8Array<ArrayBuffer>)
}

/**
 * The console's paths below `basePath`: the redirect, the page, the prefix of the assets, and the
 * sign-in page's script.
 */
function pathsOf(basePath: string) {
  const base = normaliseBasePath(basePath)
  return {
    base,
    page: `${base}/`,
    assets: `${base}/${CONSOLE_ASSETS_PREFIX}`,
    signIn: `${base}/${SIGN_IN_SCRIPT}`,
  }
}

/** An asset is loaded by a page of this origin only: not sniffed, not embedded by other sites. */
function assetHeaders(c: Context): void {
  c.header('X-Content-Type-Options', 'nosniff')
  c.header('Cross-Origin-Resource-Policy', 'same-origin')
}

/**
 * Whether a request path (as Hono's router sees it) is one of the console's: the page, its
 * redirect and its assets. A server puts this in front of its API, so that API requests reach the
 * API without passing through the console's router; every request passes it, so the paths are
 * worked out once, here.
 */
export function consolePaths(basePath: string): (requestPath: string) => boolean {
  const { base, page, assets, signIn } = pathsOf(basePath)
  return (requestPath) =>
    requestPath === page ||
    (base !== '' && requestPath === base) ||
    requestPath.startsWith(assets) ||
    requestPath === signIn
}

/**
 * The console's routes: the page at `<basePath>/` (never cached without revalidation, under a
 * strict Content-Security-Policy), its content-hashed assets at `<basePath>/console/…`
 * (cached for a year) and the sign-in page's script at `<basePath>/signin.js` (revalidated by its
 * ETag). Anything else is left to `fallback`, the admin API.
 * Null when the page has not been built.
 */
export function createConsole(
  options: ConsoleOptions,
  fallback: (request: Request, env: unknown) => Response | Promise<Response>,
): Hono | null {
  const dir = options.dir ?? BUILT
  if (!existsSync(path.join(dir, 'index.html'))) return null
  // Read at the first request for one of them: a server nobody opens the page of holds none.
  let built: Built | undefined
  const files = () => {
    built ??= readFiles(dir)
    return built
  }
  const paths = pathsOf(options.basePath)

  const app = new Hono()
  const headers = secureHeaders({
    contentSecurityPolicy: CSP,
    referrerPolicy: 'no-referrer',
    xFrameOptions: 'DENY',
    crossOriginOpenerPolicy: 'same-origin',
    crossOriginResourcePolicy: 'same-origin',
    // HTTPS is the reverse proxy's decision: HSTS sent over plain HTTP means nothing anyway.
    strictTransportSecurity: false,
    permissionsPolicy: { camera: [], microphone: [], geolocation: [], payment: [], usb: [] },
  })
  app.get(paths.page, headers, (c) => {
    const { page } = files()
    if (page === undefined) return fallback(c.req.raw, c.env)
    c.header('Cache-Control', 'no-cache')
    return send(c, page)
  })
  if (paths.base !== '') app.get(paths.base, (c) => c.redirect(paths.page, 308))
  app.get(`${paths.assets}:asset`, (c) => {
    const file = files().assets.get(c.req.param('asset') ?? '')
    if (file === undefined) return fallback(c.req.raw, c.env)
    assetHeaders(c)
    c.header('Cache-Control', 'public, max-age=31536000, immutable')
    return send(c, file)
  })
  app.get(paths.signIn, (c) => {
    const { signIn } = files()
    if (signIn === undefined) return fallback(c.req.raw, c.env)
    const { file, tag } = signIn
    assetHeaders(c)
    c.header('Cache-Control', 'no-cache')
    c.header('ETag', `W/${tag}`)
    const known = (c.req.header('If-None-Match') ?? '')
      .split(',')
      .map((given) => given.trim().replace(/^W\//, ''))
    if (known.includes(tag) || known.includes('*')) {
      c.header('Vary', 'Accept-Encoding')
      return c.body(null, 304)
    }
    return send(c, file)
  })
  app.notFound((c) => fallback(c.req.raw, c.env))
  return app
}
