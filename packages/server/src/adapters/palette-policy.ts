import type { InstallFailure, InstallRequest } from '@flowadmin/core'
import validatePackageName from 'validate-npm-package-name'
import { parseRule, type Rule, urlProblem } from './palette-rules.js'
import * as semver from './semver.js'

// What may be installed, decided from the request alone, before anything is fetched: the shape of
// the name, range and URL, then the settings' allowList and denyList (the rules of
// palette-rules.ts).

export interface PalettePolicySettings {
  allowInstall: boolean
  allowUpload: boolean
  allowList: string[]
  denyList: string[]
}

type Refusal = Extract<InstallFailure, { code: 'invalid_module_spec' | 'module_not_allowed' }>

const invalid = (message: string): Refusal => ({ code: 'invalid_module_spec', message })
const refused = (message: string): Refusal => ({ code: 'module_not_allowed', message })

/** Why `name` is not an npm package name fit to install, or null. Scoped names are accepted. */
export function nameProblem(name: string): string | null {
  // npm would read a leading `-` as an option; `..` could climb out of node_modules.
  if (name.startsWith('-') || name.includes('..') || name.includes('\\'))
    return `Invalid module name: ${name}`
  const verdict = validatePackageName(name)
  return verdict.validForNewPackages || verdict.validForOldPackages ? null : `Invalid module name: ${name}`
}

/** Why `range` is not a semver range (a plain version is one), or null. Tags and specs are not. */
export function rangeProblem(range: string): string | null {
  if (range.startsWith('-') || semver.validRange(range) === null) {
    return 'Invalid version: use a semver version or range such as 1.2.3 or ^1.2'
  }
  return null
}

/**
 * The policy: `check` answers for a request before anything is fetched; `checkInstalled` for the
 * version npm actually resolved, before it is put in place.
 */
export function createPalettePolicy(settings: PalettePolicySettings) {
  const allow = settings.allowList.map(parseRule)
  const deny = settings.denyList.map(parseRule)

  /**
   * A request's range is allowed by an allow rule when every version it could resolve to satisfies
   * the rule, and denied by a deny rule when some version could. Without a range (the newest, or a
   * tarball) any version is possible.
   */
  const allowedBy = (rule: Rule, name: string, range: string | null) =>
    rule.name.test(name) && (rule.range === null || (range !== null && semver.subset(range, rule.range)))
  const deniedBy = (rule: Rule, name: string, range: string | null) =>
    rule.name.test(name) && (rule.range === null || range === null || semver.intersects(range, rule.range))

  const decide = (name: string, range: string | null, label: string): Refusal | null => {
    if (!allow.some((rule) => allowedBy(rule, name, range)))
      return refused(`${label} is not in the allowList`)
    if (deny.some((rule) => deniedBy(rule, name, range))) return refused(`${label} is in the denyList`)
    return null
  }

  return {
    /** The refusal of a request, or null when it may go ahead. */
    check(request: InstallRequest): Refusal | null {
      if (!settings.allowInstall) return refused('Installing modules is not allowed')
      if (request.module === undefined) {
        return settings.allowUpload ? null : refused('Uploading modules is not allowed')
      }
      const name = nameProblem(request.module)
      if (name !== null) return invalid(name)
      if (request.url !== undefined) {
        const url = urlProblem(request.url)
        if (url !== null) return invalid(url)
        return decide(request.module, null, request.module)
      }
      if (request.version !== undefined) {
        const range = rangeProblem(request.version)
        if (range !== null) return invalid(range)
        return decide(request.module, request.version, `${request.module}@${request.version}`)
      }
      return decide(request.module, null, request.module)
    },
    /** The refusal of the exact version npm resolved (or an upload holds), or null. */
    checkInstalled(name: string, version: string): Refusal | null {
      const problem = nameProblem(name)
      if (problem !== null) return invalid(problem)
      return decide(name, semver.valid(version) === null ? null : version, `${name}@${version}`)
    },
    /** Whether removing is allowed at all (it is when installing is). */
    canRemove(): boolean {
      return settings.allowInstall
    },
  }
}

export type PalettePolicy = ReturnType<typeof createPalettePolicy>
