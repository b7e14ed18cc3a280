// `adminAuth.users`: people who sign in with a password, each with a hash, permissions and grants.
import * as v from 'valibot'
import { grants } from './access.js'
import { permissions, strictObject, text } from './fields.js'

/**
 * A password's (or secret's) hash: argon2 as `flowadmin hash-pw` makes it, or bcrypt as Node-RED's
 * settings.js holds it (`$2a$`, `$2b$`, `$2y$`; accepted so users move without new passwords).
 */
const BCRYPT = /^\$2[aby]\$\d\d\$[./A-Za-z0-9]{53}$/

/** True for a bcrypt hash (from Node-RED's settings.js), which `flowadmin hash-pw` should replace. */
export const isBcryptHash = (hash: string): boolean => BCRYPT.test(hash)

/** What a malformed bcrypt hash is told. */
export const BCRYPT_SHAPE = 'is not a whole bcrypt hash ($2a$, $2b$ or $2y$, a cost, then 53 characters)'

const passwordHash = (what: string) =>
  v.pipe(
    v.string(`must be a string (${what} made by \`flowadmin hash-pw\`)`),
    v.check(
      (hash) => hash.startsWith('$argon2') || isBcryptHash(hash),
      (issue) =>
        (issue.input as string).startsWith('$2')
          ? BCRYPT_SHAPE
          : `must be ${what} made by \`flowadmin hash-pw\` (or a bcrypt hash from Node-RED), not a plain password`,
    ),
  )

const user = v.pipe(
  strictObject({
    username: text('a username'),
    password: passwordHash('an argon2 hash'),
    // Permissions hold everywhere; grants give a role on a scope. At least one of them.
    permissions: v.optional(permissions),
    grants: v.optional(grants),
  }),
  v.check(
    (entry) => entry.permissions !== undefined || (entry.grants ?? []).length > 0,
    'needs permissions (everywhere) or grants ({ role, on }), or both',
  ),
)

/** The usernames listed more than once, comma-separated. */
function duplicates(users: Array<{ username: string }>): string {
  const seen = new Set<string>()
  const twice = new Set<string>()
  for (const { username } of users) (seen.has(username) ? twice : seen).add(username)
  return [...twice].join(', ')
}

export const users = v.pipe(
  v.array(user, 'must be a list of users'),
  v.nonEmpty('must list at least one user'),
  v.check(
    (list) => new Set(list.map((entry) => entry.username)).size === list.length,
    (issue) => `usernames must be unique (${duplicates(issue.input as Array<{ username: string }>)})`,
  ),
)
