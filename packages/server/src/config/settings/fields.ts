// The pieces every section of the settings is made of: objects that name an unknown key's nearest
// known one, strings, whole numbers, switches, permissions, and checks by a `...Problem` function.
import { PERMISSION_WORD } from '@flowadmin/core'
import * as v from 'valibot'
import { nearestWord } from '../nearest-word.js'

export const text = (what: string) =>
  v.pipe(v.string(`must be a string (${what})`), v.nonEmpty(`must not be empty (${what})`))

export const whole = (min: number, max: number) =>
  v.pipe(
    v.number('must be a number'),
    v.integer('must be a whole number'),
    v.minValue(min, `must be at least ${min}`),
    v.maxValue(max, `must be at most ${max}`),
  )

export const onOff = v.boolean('must be true or false')

export const permissionWord = v.pipe(
  v.string('must be a string'),
  v.regex(
    PERMISSION_WORD,
    (issue) =>
      `${issue.received} is not a permission (use *, read, write, *.read, *.write, or <resource>.read|write)`,
  ),
)

export const permissions = v.union(
  [permissionWord, v.pipe(v.array(permissionWord), v.nonEmpty('must list at least one permission'))],
  // Reached only when the value is neither a string nor a list: those report their own issues.
  'must be a permission or a non-empty list of permissions (e.g. "*" or ["read"])',
)

/** The hosts on which plain http is accepted for a URL the settings name. */
export const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]'])

/** A check of a string by a function that says what is wrong with it, or null. */
export const issueOf = (problem: (value: string) => string | null) =>
  v.rawCheck<string>(({ dataset, addIssue }) => {
    if (!dataset.typed) return
    const message = problem(dataset.value)
    if (message !== null) addIssue({ message })
  })

/** The known key suggested for an unknown-key issue; its field is completed once its path is. */
const suggestions = new WeakMap<object, string>()

/** The known key an unknown-key issue suggests instead (`uiPort` for `uiPrt`), if any. */
export const suggestionOf = (issue: v.BaseIssue<unknown>): string | undefined => suggestions.get(issue)

/**
 * An object that takes only these keys. An unknown key is reported with the nearest known one,
 * when it is close enough to be a slip (`uiPrt`: did you mean uiPort?).
 */
export function strictObject<const TEntries extends v.ObjectEntries>(entries: TEntries) {
  const known = Object.keys(entries)
  return v.strictObject(entries, (issue: v.StrictObjectIssue) => {
    if (issue.expected === 'never') {
      const key = issue.path?.[0]?.key
      const nearest = typeof key === 'string' ? nearestWord(key, known) : null
      if (nearest !== null) suggestions.set(issue, nearest)
      return 'unknown setting'
    }
    if (issue.expected?.startsWith('"')) return 'is required'
    return 'must be an object'
  })
}

/** The error of a field whose value passed its schema but not a rule across fields: `adminAuth.mfa.key: …`. */
export type FieldProblem = (field: string, message: string) => Error
