/**
 * A short, human description of the client behind a `User-Agent` header, kept with each token so
 * a person can tell their sessions apart ("Firefox 133 on Linux", "curl 8.5.0"). Only this
 * description is stored, never the header: it says enough to recognise a device or a tool and
 * no more, and it is bounded in length and characters whatever the client sends.
 */
export function describeUserAgent(header: string | null | undefined): string | null {
  const ua = header?.trim()
  if (!ua) return null
  if (ua.startsWith('Mozilla/')) {
    const browser = browserOf(ua)
    const system = systemOf(ua)
    if (browser !== null) return clean(system === null ? browser : `${browser} on ${system}`)
  }
  // A tool names itself in its first product token: `curl/8.5.0`, `python-requests/2.31.0`.
  const product = /^([A-Za-z][\w.+-]*)(?:\/([\w.+-]+))?/.exec(ua)
  if (product === null) return null
  const [, name = '', version] = product
  return clean(version === undefined ? name : `${name} ${version}`)
}

/** The most specific browser the header names first: Edge and Opera also say Chrome and Safari. */
const BROWSERS: Array<[string, RegExp]> = [
  ['Edge', /\bEdg(?:e|A|iOS)?\/(\d+)/],
  ['Opera', /\bOPR\/(\d+)/],
  ['Firefox', /\b(?:Firefox|FxiOS)\/(\d+)/],
  ['Chrome', /\b(?:HeadlessChrome|Chrome|Chromium|CriOS)\/(\d+)/],
  ['Safari', /\bVersion\/(\d+)[\d.]* (?:Mobile\/\S+ )?Safari\//],
]

function browserOf(ua: string): string | null {
  for (const [name, pattern] of BROWSERS) {
    const match = pattern.exec(ua)
    if (match) return `${name} ${match[1]}`
  }
  return null
}

/** Ordered: Android and ChromeOS also say Linux, iOS also says Mac OS X. */
const SYSTEMS: Array<[string, RegExp]> = [
  ['Android', /\bAndroid\b/],
  ['iOS', /\b(?:iPhone|iPad|iPod)\b/],
  ['ChromeOS', /\bCrOS\b/],
  ['Windows', /\bWindows\b/],
  ['macOS', /\bMac OS X\b/],
  ['Linux', /\bLinux\b/],
]

function systemOf(ua: string): string | null {
  for (const [name, pattern] of SYSTEMS) if (pattern.test(ua)) return name
  return null
}

/** At most 64 characters, letters, digits and plain punctuation only. */
function clean(description: string): string {
  return description.replace(/[^\w .+/-]/g, '').slice(0, 64)
}
