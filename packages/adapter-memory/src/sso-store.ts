import type { IssuedCode, SsoStore, StartedSignIn } from '@flowadmin/core'
import { deleteEnded } from './expiring.js'
import { createWaitingRecords } from './waiting.js'

/** Names bound to identities, logout tokens seen until their time ends, sign-ins under way. */
export function createSsoStore(): SsoStore {
  const names = new Map<string, string>()
  const logouts = new Map<string, number>()
  const signIns = createWaitingRecords<StartedSignIn>()
  const codes = createWaitingRecords<IssuedCode>()
  return {
    async claimName(username, identity) {
      const bound = names.get(username)
      if (bound !== undefined) return bound
      names.set(username, identity)
      return identity
    },
    async rememberLogout(key, expiresAt, now) {
      const until = logouts.get(key)
      if (until !== undefined && until > now) return false
      logouts.set(key, expiresAt)
      return true
    },
    async forgetLogout(key) {
      logouts.delete(key)
    },
    async deleteExpired(now, limit) {
      return deleteEnded(logouts, (until) => until, now, limit)
    },
    async saveSignIn(signIn, bounds, now) {
      return signIns.save(signIn, bounds, now)
    },
    async takeSignIn(key, now) {
      return signIns.take(key, now)
    },
    async saveCode(code, bounds, now) {
      return codes.save(code, bounds, now)
    },
    async findCode(key, now) {
      return codes.find(key, now)
    },
    async takeCode(key, clientId, now) {
      return codes.take(key, now, (code) => (code.authorization?.clientId ?? null) === clientId)
    },
    async deleteExpiredSignIns(now, limit) {
      const removed = signIns.deleteExpired(now, limit)
      return removed + codes.deleteExpired(now, limit - removed)
    },
  }
}
