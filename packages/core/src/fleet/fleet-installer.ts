import type { ModuleInstaller } from '../ports/index.js'
import type { Fleet } from './fleet.js'

/**
 * The installer of fleet mode: a module is installed here first (the palette policy, the
 * registry, and its node sets become known), then recorded for every instance to install, at the
 * version installed here, with the exact tarball npm fetched (its integrity and URL): each instance
 * installs that tarball and no other. Only registry installs: an instance cannot fetch an upload.
 * A removal is recorded for every instance; the copy here goes too.
 */
export function fleetInstaller(
  fleet: Fleet,
  local: ModuleInstaller | undefined,
): ModuleInstaller | undefined {
  if (local === undefined) return undefined
  return {
    async install(request) {
      if (request.module === undefined || request.url !== undefined) {
        return {
          ok: false,
          error: {
            code: 'module_not_allowed',
            message: 'In fleet mode modules are installed from the registry, by name',
          },
        }
      }
      const outcome = await local.install(request)
      if (outcome.ok) {
        await fleet.recordInstall(
          outcome.module.name,
          'install',
          outcome.module.version,
          outcome.artifact ?? null,
        )
      }
      return outcome
    },
    async remove(name) {
      await fleet.recordInstall(name, 'remove', null)
      // The copy here served only to know the module; it may well not be here.
      await local.remove(name).catch(() => undefined)
      return { ok: true }
    },
  }
}
