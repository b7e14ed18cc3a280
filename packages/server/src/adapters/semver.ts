// The four functions of semver the palette uses, loaded from the package at the first call of any
// of them: a start whose settings hold no version rules, and that installs nothing, never loads it.
import { createRequire } from 'node:module'
import type validSemver from 'semver/functions/valid.js'
import type semverIntersects from 'semver/ranges/intersects.js'
import type semverSubset from 'semver/ranges/subset.js'
import type validSemverRange from 'semver/ranges/valid.js'

interface Semver {
  valid: typeof validSemver
  validRange: typeof validSemverRange
  subset: typeof semverSubset
  intersects: typeof semverIntersects
}

let semver: Semver | undefined

/** Loaded synchronously: the settings' rules are checked by valibot, whose checks are. */
function load(): Semver {
  if (semver === undefined) {
    const require = createRequire(import.meta.url)
    // These files, not the whole package: half its files.
    semver = {
      valid: require('semver/functions/valid.js'),
      validRange: require('semver/ranges/valid.js'),
      subset: require('semver/ranges/subset.js'),
      intersects: require('semver/ranges/intersects.js'),
    }
  }
  return semver
}

/** The version `version` is, cleaned, or null when it is none. */
export const valid = (version: string): string | null => load().valid(version)
/** The range `range` is, normalised, or null when it is none (a plain version is one). */
export const validRange = (range: string): string | null => load().validRange(range)
/** Whether every version `sub` allows, `dom` allows too. */
export const subset = (sub: string, dom: string): boolean => load().subset(sub, dom)
/** Whether some version satisfies both ranges. */
export const intersects = (a: string, b: string): boolean => load().intersects(a, b)
