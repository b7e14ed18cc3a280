import { RECENT_SIGN_IN_MS, type ReauthenticationError } from '../auth/factor-facade.js'
import { hasPermission } from '../auth/permissions.js'
import type { AccessError, Principal } from '../auth/principal.js'
import { err, ok, type Result } from '../errors.js'

/**
 * The permission an install or upgrade on the fleet needs besides `nodes.write`: it runs a
 * package's code on every instance. An API token holds it only when its scope names it (`*` or
 * `write` do not); a person's session holds it when their permissions cover it, and only while
 * the sign-in is recent.
 */
export const FLEET_INSTALL_PERMISSION = 'installs.write'

export type FleetInstallRefusal = AccessError | ReauthenticationError

/** Whether `principal` may install or upgrade a module on the fleet now. */
export function mayInstallOnFleet(principal: Principal, now: number): Result<null, FleetInstallRefusal> {
  const forbidden = err({ code: 'forbidden', permission: FLEET_INSTALL_PERMISSION } as const)
  // Auth off, the command line on the store, or the settings' default permissions: no sign-in to ask for.
  if (principal.kind === 'anonymous')
    return hasPermission(principal.permissions, FLEET_INSTALL_PERMISSION) ? ok(null) : forbidden
  if (principal.tokenKind === 'api')
    return principal.permissions.includes(FLEET_INSTALL_PERMISSION) ? ok(null) : forbidden
  if (!hasPermission(principal.permissions, FLEET_INSTALL_PERMISSION)) return forbidden
  return now - principal.signedInAt <= RECENT_SIGN_IN_MS
    ? ok(null)
    : err({
        code: 'reauthentication_required',
        minutes: RECENT_SIGN_IN_MS / 60_000,
        action: 'fleet_install',
      } as const)
}
