// `adminAuth.webauthn`: the relying party of passkeys.
import * as v from 'valibot'
import { type FieldProblem, strictObject, text } from './fields.js'

/** `adminAuth.webauthn`: the relying party of passkeys. */
export interface WebAuthnSettings {
  /** The relying party id: a host name each origin's host is, or ends with `.` and it. */
  rpId: string
  /** The name browsers show when a passkey is made; default `flowadmin`. */
  rpName: string
  /** The origins (`https://host[:port]`) flowadmin's pages are served from. */
  origins: string[]
}

export const DEFAULT_RP_NAME = 'flowadmin'

/** A relying party id: a DNS host name (`localhost` included), never an IP address. */
const isRpId = (host: string) =>
  /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/.test(host) &&
  !/^[0-9.]+$/.test(host)

/** An absolute http(s) URL that is an origin alone: no path, query, fragment or credentials. */
function isOrigin(text: string): boolean {
  if (!URL.canParse(text)) return false
  const url = new URL(text)
  return (
    (url.protocol === 'https:' || url.protocol === 'http:') &&
    url.username === '' &&
    url.password === '' &&
    url.search === '' &&
    url.hash === '' &&
    url.pathname === '/' &&
    !text.endsWith('/')
  )
}

/** Whether `host` (an origin's) is the relying party id or one of its subdomains. */
const underRpId = (host: string, rpId: string) => host === rpId || host.endsWith(`.${rpId}`)

export const webauthn = strictObject({
  rpId: v.pipe(
    text('the host name passkeys are bound to, e.g. "admin.example.com"'),
    v.check(
      isRpId,
      'must be a lower-case host name (no scheme, port or path; not an IP address), e.g. "admin.example.com"',
    ),
  ),
  rpName: v.optional(text('the name browsers show when a passkey is made')),
  origins: v.pipe(
    v.array(
      v.pipe(
        text('an origin such as "https://admin.example.com"'),
        v.check(
          isOrigin,
          'must be an http(s) origin: scheme, host and port only, e.g. "https://admin.example.com"',
        ),
      ),
      'must be a list of origins',
    ),
    v.nonEmpty('must list at least one origin'),
  ),
})

/** `adminAuth.webauthn` as the server uses it; refuses an origin outside the relying party id. */
export function webauthnOf(parsed: v.InferOutput<typeof webauthn>, problem: FieldProblem): WebAuthnSettings {
  const outside = parsed.origins.find((origin) => !underRpId(new URL(origin).hostname, parsed.rpId))
  if (outside !== undefined) {
    throw problem(
      '.webauthn.origins',
      `${outside} is not on ${parsed.rpId}: each origin's host must be rpId or end with .${parsed.rpId}`,
    )
  }
  return {
    rpId: parsed.rpId,
    rpName: parsed.rpName ?? DEFAULT_RP_NAME,
    origins: parsed.origins.map((origin) => new URL(origin).origin),
  }
}
