// The look of flowadmin's sign-in and of the pages around it (refused, expired, the provider
// down): one page, server-rendered, with no third-party asset, no inline script and no token in
// any URL. Its only script (the passkey button) is flowadmin's own, from the console's bundle.

import { Html, html } from './html.js'
import { STYLE } from './style.js'

/** Seconds to wait before trying again: the provider's outage, or sign-ins that must end first. */
const RETRY_AFTER_OF: Partial<Record<number, number>> = { 429: 60, 503: 30 }

/** Headers of every sign-in page: never cached, never framed, nothing but flowadmin's own. */
const PAGE_HEADERS = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy':
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'self'; connect-src 'self'; base-uri 'none'; frame-ancestors 'none'",
  'Cache-Control': 'no-store',
  Pragma: 'no-cache',
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
}

export interface PageOptions {
  status: number
  title: string
  /** The page's content below its heading. */
  body: Html
  /** The passkey script's address, when the page has a passkey button. */
  script?: string | undefined
  headers?: Record<string, string> | undefined
}

/** A sign-in page: flowadmin's card with a heading and `body`. */
export function signInPage({ status, title, body, script, headers }: PageOptions): Response {
  const page = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} – flowadmin</title><style>${new Html(STYLE)}</style></head>
<body><main><p class="brand">flowadmin</p><h1 id="title">${title}</h1>
${body}
</main>${script === undefined ? '' : html`<script type="module" src="${script}"></script>`}</body></html>
`
  const retryAfter = RETRY_AFTER_OF[status]
  return new Response(page.text, {
    status,
    headers: {
      ...PAGE_HEADERS,
      ...(retryAfter !== undefined && { 'Retry-After': String(retryAfter) }),
      ...headers,
    },
  })
}

/** A page that says what happened and the way back, e.g. a refused or expired sign-in. */
export const messagePage = (
  status: number,
  title: string,
  message: string,
  back: { href: string; label: string },
): Response =>
  signInPage({
    status,
    title,
    body: html`<p id="message">${message}</p>
<p><a href="${back.href}">${back.label}</a></p>`,
  })
