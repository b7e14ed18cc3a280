// Roles: named sets of Node-RED permission words, four built in and any number from the settings,
// each optionally with the longest a token may use it (its rights fall away once the token is older).
import { PERMISSION_WORD, toPermissionList } from '../auth/permissions.js'

/**
 * The built-in roles. `deployer` holds what the stock editor needs to change and run flows: the
 * deploy (`flows.write`, POST /flows and /flows/state), the inject button (`inject.write`), the
 * debug node's switch (`debug.write`) and saving to the library (`library.write`); nothing about
 * the palette, the context stores, projects or the runtime's settings.
 */
export const BUILT_IN_ROLES: Readonly<Record<string, readonly string[]>> = {
  viewer: ['read'],
  deployer: ['read', 'flows.write', 'inject.write', 'debug.write', 'library.write'],
  'palette-admin': ['read', 'nodes.write'],
  admin: ['*'],
}

/** A role name: 1 to 64 letters, digits, ".", "_" or "-", starting with a letter or digit. */
export const ROLE_NAME_FORM = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/** A role as the settings give it (`adminAuth.roles.<name>`). */
export interface RoleOptions {
  permissions: string | readonly string[]
  /** Seconds: a token older than this no longer has this role's rights. Absent: no limit. */
  maxTokenLifetime?: number | undefined
}

/** A role as the core uses it. */
export interface Role {
  name: string
  permissions: string[]
  /** Milliseconds; null: no limit. */
  maxAgeMs: number | null
}

/**
 * The roles: the built-in ones, then the settings' (a settings role of a built-in name replaces
 * it, e.g. to give `admin` a lifetime). Throws for a malformed name, word or lifetime: the
 * settings check them first, with the field named.
 */
export function rolesOf(custom: Readonly<Record<string, RoleOptions>> = {}): ReadonlyMap<string, Role> {
  const roles = new Map<string, Role>()
  for (const [name, permissions] of Object.entries(BUILT_IN_ROLES))
    roles.set(name, { name, permissions: [...permissions], maxAgeMs: null })
  for (const [name, options] of Object.entries(custom)) {
    if (!ROLE_NAME_FORM.test(name)) throw new RangeError(`Role name not allowed: ${name.slice(0, 64)}`)
    const permissions = toPermissionList(options.permissions)
    const wrong = permissions.find((word) => !PERMISSION_WORD.test(word))
    if (permissions.length === 0 || wrong !== undefined)
      throw new RangeError(`Role ${name}: not a permission: ${String(wrong).slice(0, 64)}`)
    const lifetime = options.maxTokenLifetime
    if (lifetime !== undefined && (!Number.isInteger(lifetime) || lifetime <= 0))
      throw new RangeError(`Role ${name}: maxTokenLifetime must be a positive whole number of seconds`)
    roles.set(name, { name, permissions, maxAgeMs: lifetime === undefined ? null : lifetime * 1000 })
  }
  return roles
}
