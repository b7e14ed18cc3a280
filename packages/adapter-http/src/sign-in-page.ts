// The look of flowadmin's sign-in and of the pages around it (refused, expired, the provider
// down): one page, server-rendered, with no third-party asset, no inline script and no token in
// any URL. Its only script (the passkey button) is flowadmin's own, from the console's bundle.

/** Seconds to wait before trying again: the provider's outage, or sign-ins that must end first. */
const RETRY_AFTER_OF: Partial<Record<number, number>> = { 429: 60, 503: 30 }

/** Text for HTML: every character that could end a text node or an attribute, escaped. */
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`)

/** HTML made from a template whose every substitution is escaped, unless it is HTML already. */
export class Html {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text
  }
}
export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let text = strings[0] ?? ''
  values.forEach((value, index) => {
    const part = Array.isArray(value)
      ? value.map((item) => (item instanceof Html ? item.text : escapeHtml(String(item)))).join('')
      : value instanceof Html
        ? value.text
        : value === null || value === undefined || value === false
          ? ''
          : escapeHtml(String(value))
    text += part + (strings[index + 1] ?? '')
  })
  return new Html(text)
}

// Contrast at least 4.5:1 everywhere (WCAG AA); focus always visible; fits a phone.
const STYLE = `
:root{color-scheme:light;font-family:system-ui,-apple-system,"Segoe UI",sans-serif;color:#1f2328;background:#f3f4f6}
body{margin:0;min-height:100vh;display:flex;align-items:flex-start;justify-content:center}
main{background:#fff;margin:4rem 1rem;padding:2rem;border-radius:.5rem;box-shadow:0 1px 3px #0003;width:100%;max-width:24rem}
.brand{margin:0 0 1rem;font-weight:600;color:#8f0000;letter-spacing:.02em}
h1{font-size:1.4rem;margin:0 0 1rem}
p{line-height:1.5}
label{display:block;font-weight:600;margin:1rem 0 .25rem}
input{box-sizing:border-box;width:100%;font:inherit;padding:.5rem;border:1px solid #6e7781;border-radius:.25rem}
button,.button{display:inline-block;box-sizing:border-box;width:100%;margin-top:1.25rem;font:inherit;font-weight:600;padding:.6rem;border-radius:.25rem;border:1px solid #8f0000;background:#8f0000;color:#fff;cursor:pointer;text-align:center;text-decoration:none}
button.secondary{background:#fff;color:#8f0000}
:focus-visible{outline:3px solid #0550ae;outline-offset:2px}
.error{color:#a40e26;background:#ffebe9;border:1px solid #a40e26;border-radius:.25rem;padding:.5rem .75rem}
.error:empty{display:none}
.or{margin:1.25rem 0 0;text-align:center;color:#57606a}
code,.codes{font-family:ui-monospace,Menlo,Consolas,monospace}
.secret{word-break:break-all;background:#f6f8fa;padding:.5rem;border-radius:.25rem}
.codes{columns:2;padding-left:1.5rem}
img.qr{display:block;width:12rem;height:12rem;margin:1rem auto;image-rendering:pixelated}
a{color:#0550ae}
`

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
