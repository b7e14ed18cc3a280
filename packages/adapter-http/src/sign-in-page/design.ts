// flowadmin's look, in one place for its two pages for people: the sign-in page (style.ts inlines
// it) and the console (its build puts it first in the console's style sheet, and makes the
// console's icon of LOGO_SVG). Plain strings, so the sign-in page reads no file on any runtime.
// Contrast in both schemes: text at least 4.5:1 on the backgrounds it stands on, the edges of
// controls and the focus ring at least 3:1 (WCAG AA).

/** The colours of the light scheme, by role. */
const LIGHT = {
  /** The page behind everything; also the inside of fields. */
  bg: '#f5f6f8',
  /** Cards, panels, the bar at the top. */
  surface: '#ffffff',
  text: '#1b1f27',
  /** Secondary text: hints, times, the footer. */
  muted: '#5a6270',
  /** Separators and the edges of cards and buttons (decorative). */
  line: '#d9dde4',
  /** The edges of fields and the track of a switch that is off: controls a person must find. */
  control: '#7b8494',
  accent: '#2f5bd3',
  /** Text on the accent colour. */
  'accent-text': '#ffffff',
  'ok-bg': '#e3f6ea',
  'ok-text': '#17623a',
  'bad-bg': '#fde8e8',
  'bad-text': '#a1231f',
  /** Tags, chips and notices. */
  chip: '#eef1f6',
  focus: '#1d4ed8',
}

/** The same roles in the dark scheme (prefers-color-scheme: dark). */
const DARK: Record<keyof typeof LIGHT, string> = {
  bg: '#12151b',
  surface: '#1b2029',
  text: '#e7eaf0',
  muted: '#a3abb9',
  line: '#323a48',
  control: '#6b7486',
  accent: '#7ea2ff',
  'accent-text': '#0c1220',
  'ok-bg': '#173826',
  'ok-text': '#8fe3b0',
  'bad-bg': '#4a1d1d',
  'bad-text': '#ffb4ae',
  chip: '#262d39',
  focus: '#9db8ff',
}

/** Type, spacing, radii and the focus ring: the same in both schemes. */
const SCALE = {
  font: 'system-ui, -apple-system, "Segoe UI", Roboto, "Noto Sans", "Liberation Sans", sans-serif',
  'font-mono': 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
  'size-brand': '1.2rem',
  'size-title': '1.35rem',
  'size-small': '0.85rem',
  'space-1': '0.25rem',
  'space-2': '0.5rem',
  'space-3': '0.75rem',
  'space-4': '1rem',
  'space-5': '1.5rem',
  'space-6': '2rem',
  /** Fields and buttons. */
  'pad-field': '0.55rem 0.7rem',
  'pad-button': '0.45rem 0.9rem',
  /** Alerts and notices. */
  'pad-message': '0.6rem 0.8rem',
  /** The space beside the page's content and its bar, wider on wider screens. */
  gutter: 'clamp(1rem, 4vw, 2.5rem)',
  /** The bar at the top with the brand. */
  'bar-height': '4rem',
  'radius-small': '0.3rem',
  radius: '0.45rem',
  'radius-large': '0.75rem',
  'radius-pill': '999px',
  'focus-ring': '3px solid var(--fa-focus)',
  'focus-offset': '2px',
}

/** The brand's mark: the console's icon, and beside the name on both pages. */
export const LOGO_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><title>flowadmin</title><rect width="32" height="32" rx="7" fill="#2f5bd3"/><path d="M9 10h14M9 16h9M9 22h5" stroke="#fff" stroke-width="3" stroke-linecap="round"/><circle cx="22" cy="22" r="3" fill="#8fe3b0"/></svg>'

const declarations = (tokens: Record<string, string>) =>
  Object.entries(tokens)
    .map(([name, value]) => `--fa-${name}:${value};`)
    .join('')

/** The tokens as CSS custom properties (`--fa-accent`, …): light, and dark where the person prefers it. */
export const TOKENS = `:root{color-scheme:light dark;${declarations(SCALE)}${declarations(LIGHT)}}
@media (prefers-color-scheme:dark){:root{${declarations(DARK)}}}
`

/**
 * The rules both pages share, over the tokens: type, fields, buttons (`.primary` for the main
 * action), alerts (`.error`), notices, the brand with its mark, the QR code of a new second factor
 * (on white in both schemes, so that it keeps its light margin, and never smoothed).
 */
export const BASE = `*{box-sizing:border-box}
:root{font-family:var(--fa-font);font-size:16px;line-height:1.45}
[hidden]{display:none!important}
body{margin:0;background:var(--fa-bg);color:var(--fa-text)}
h1,h2,h3{margin:0;line-height:1.25}
label{font-weight:600}
input,select{font:inherit;color:inherit;background:var(--fa-bg);border:1px solid var(--fa-control);border-radius:var(--fa-radius);padding:var(--fa-pad-field)}
button{font:inherit;font-weight:600;color:var(--fa-text);background:var(--fa-surface);border:1px solid var(--fa-line);border-radius:var(--fa-radius);padding:var(--fa-pad-button);cursor:pointer}
button:hover{border-color:var(--fa-accent)}
button:disabled{cursor:not-allowed;opacity:.55}
.primary{background:var(--fa-accent);color:var(--fa-accent-text);border-color:var(--fa-accent)}
:focus-visible{outline:var(--fa-focus-ring);outline-offset:var(--fa-focus-offset)}
a{color:var(--fa-accent)}
.error{margin:0;padding:var(--fa-pad-message);border-radius:var(--fa-radius);background:var(--fa-bad-bg);color:var(--fa-bad-text);font-weight:500}
.notice{margin:0 0 var(--fa-space-4);padding:var(--fa-pad-message);border-radius:var(--fa-radius);background:var(--fa-chip)}
.muted{color:var(--fa-muted)}
code,.mono{font-family:var(--fa-font-mono)}
.brand{display:flex;align-items:center;gap:0.6rem;font-size:var(--fa-size-brand);font-weight:650;letter-spacing:.01em;color:var(--fa-text)}
.brand::before{content:"";flex:none;width:1.75rem;height:1.75rem;background:url("data:image/svg+xml,${encodeURIComponent(LOGO_SVG)}") center/contain no-repeat}
.qr{width:12rem;height:12rem;background:#fff;padding:var(--fa-space-2);border-radius:var(--fa-radius);image-rendering:pixelated}
`
