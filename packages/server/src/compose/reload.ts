import { messageOf } from '@flowadmin/core'
import type { AuditLog } from '../adapters/audit.js'
import { resolveSettings } from '../config/settings/load.js'
import type { Settings } from '../config/settings/schema.js'
import type { Log } from '../log.js'
import type { ReloadOutcome, RunningServer, ServerOptions } from './options.js'

/**
 * Settings a running server takes from its file again: the users, their passwords, permissions
 * and grants, the resource servers, the roles and the groups of instances. Every other setting
 * needs a restart.
 */
export const RELOADED_SETTINGS: readonly string[] = [
  'adminAuth.users',
  'adminAuth.resourceServers',
  'adminAuth.roles',
  'fleet.groups',
]

/** The dotted names of the settings whose values differ, `adminAuth` looked into one level. */
function changedSettings(before: Settings, after: Settings): string[] {
  const changed: string[] = []
  const differ = (a: unknown, b: unknown) => JSON.stringify(a) !== JSON.stringify(b)
  for (const key of Object.keys(after) as Array<keyof Settings>) {
    // The roles are adminAuth's, looked into below; the groups are the fleet section's.
    if (key === 'access') {
      if (differ(before.access.groups, after.access.groups)) changed.push('fleet.groups')
      continue
    }
    if (key !== 'adminAuth') {
      // Named as in the settings file.
      if (differ(before[key], after[key])) changed.push(key === 'palette' ? 'externalModules.palette' : key)
      continue
    }
    const was: Record<string, unknown> = { ...before.adminAuth }
    const now: Record<string, unknown> = { ...after.adminAuth }
    for (const field of new Set([...Object.keys(was), ...Object.keys(now)])) {
      if (differ(was[field], now[field])) changed.push(`adminAuth.${field}`)
    }
  }
  return changed
}

export async function reloadSettings(
  server: RunningServer,
  options: ServerOptions,
  cwd: string,
  log: Log,
): Promise<ReloadOutcome> {
  const refuse = (message: string) => refuseReload(log, message)
  if (options.settingsFile === undefined) return refuse('the server was started without a settings file')
  let next: Settings
  try {
    next = await resolveSettings(options, cwd)
  } catch (error) {
    return refuse(messageOf(error).split('\n').join('; '))
  }
  if ((next.adminAuth === null) !== (server.settings.adminAuth === null)) {
    return refuse('adminAuth: turning authentication on or off needs a restart')
  }
  const changed = changedSettings(server.settings, next)
  const before = { ...server.settings.access, users: server.settings.adminAuth?.users ?? [] }
  const needRestart = changed.filter((name) => !RELOADED_SETTINGS.includes(name))
  if (next.adminAuth !== null && server.settings.adminAuth !== null) {
    try {
      // The tokens of removed users go first; the users change only once they are gone.
      await server.core.setUsers(next.adminAuth.users)
    } catch (error) {
      return refuse(`the tokens of removed users could not be deleted: ${messageOf(error)}`)
    }
    // Every secret is verified again at its next use.
    server.core.resourceServers.set(next.adminAuth.resourceServers ?? [])
    server.settings = {
      ...server.settings,
      adminAuth: {
        ...server.settings.adminAuth,
        users: next.adminAuth.users,
        resourceServers: next.adminAuth.resourceServers,
        roles: next.adminAuth.roles,
      },
    }
  }
  // Roles and groups count from the next request on (the settings checked every grant against them).
  const groupsChanged = JSON.stringify(server.core.rights.groups()) !== JSON.stringify(next.access.groups)
  server.core.rights.set(next.access)
  // The instances' polls see the groups' flows anew: which rollout an instance runs follows its groups.
  if (groupsChanged && server.core.fleet !== null) {
    try {
      await server.core.fleet.rollouts.membershipChanged()
    } catch (error) {
      log('warning', "the instances' polls see the new groups at the next change", {
        reason: messageOf(error),
      })
    }
  }
  server.settings = { ...server.settings, access: next.access }
  // The trail names what the reload changed of who may do what, when it changed anything.
  server.core.accessReloaded(before, { ...next.access, users: next.adminAuth?.users ?? [] })
  const users = next.adminAuth?.users.length ?? 0
  log('info', 'settings reloaded', { users })
  if (needRestart.length > 0)
    log('warning', 'these settings change only after a restart', { settings: needRestart })
  return { ok: true, users, needRestart }
}

/** A reload that did not happen: one line saying why; the running settings stay as they were. */
export function refuseReload(log: Log, message: string): ReloadOutcome {
  log('error', 'settings not reloaded, the running settings stay', { reason: message })
  return { ok: false, message }
}

/** Reopens the audit log file by its name (after a rotation); a failure keeps the old file and is logged. */
export function reopenAuditLog(audit: AuditLog, log: Log): void {
  try {
    audit.reopen()
  } catch (error) {
    log('error', 'audit log not reopened; its lines still go to the file open before', {
      reason: messageOf(error),
    })
  }
}
