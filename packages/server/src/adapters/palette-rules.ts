// The rules of `externalModules.palette` (Node-RED's: `*` patterns on names, optionally
// `@<semver range>`) and the shape of a tarball's URL: checked when the settings are read, applied
// by the palette policy.
import { validRange } from './semver.js'

export interface Rule {
  name: RegExp
  /** null: any version. */
  range: string | null
}

/** Why `url` is not an http(s) URL of a tarball, or null: no git, file or other specs. */
export function urlProblem(url: string): string | null {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'Invalid url: use an http or https URL of a tarball'
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    return 'Invalid url: use an http or https URL of a tarball'
  }
  if (parsed.username !== '' || parsed.password !== '')
    return 'Invalid url: credentials in a URL are not accepted'
  return null
}

/** `node-red-contrib-*@<2` → name pattern and range. A scope's `@` is not a version separator. */
export function parseRule(text: string): Rule {
  const at = text.indexOf('@', 1)
  const pattern = at === -1 ? text : text.slice(0, at)
  const range = at === -1 ? null : text.slice(at + 1)
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')
  return { name: new RegExp(`^${escaped}$`), range: range === '' ? null : range }
}

/** Why a rule of the settings is not usable, or null (for the settings' validation). */
export function ruleProblem(text: string): string | null {
  if (text.trim() === '') return 'must not be empty'
  const rule = parseRule(text)
  if (rule.range !== null && validRange(rule.range) === null) {
    return `${text}: the part after "@" must be a semver range`
  }
  return null
}
