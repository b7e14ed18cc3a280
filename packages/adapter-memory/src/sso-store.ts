import type { IssuedCode, SsoStore } from '@flowadmin/core'
import { deleteEnded } from './expiring.js'
import { createWaitingRecords } from './waiting.js'

/**
 * Remembers `key` until `expiresAt` in `map` unless it is remembered already and its time has
 * not ended at `now`: true when it was remembered now.
 */
const rememberOnce = (map: Map<string, number>, key: string, expiresAt: number, now: number): boolean => {
  const until = map.get(key)
  if (until !== undefined && until > now) return false
  map.set(key, expiresAt)
  return true
}

/**
 * Names bound to identities, logout tokens seen and sign-in challenges spent until their time
 * ends, the sign-in key, one-time codes.
 */
export function createSsoStore(): SsoStore {
  const names = new Map<string, string>()
  const logouts = new Map<string, number>()
  const spent = new Map<string, number>()
  let signInKey: string | null = null
  const codes = createWaitingRecords<IssuedCode>()
  return {
    async claimName(username, identity) {
      const bound = names.get(username)
      if (bound !== undefined) return bound
      names.set(username, identity)
      return identity
    },
    async rememberLogout(key, expiresAt, now) {
      return rememberOnce(logouts, key, expiresAt, now)
    },
    async forgetLogout(key) {
      logouts.delete(key)
    },
    async deleteExpired(now, limit) {
      return deleteEnded(logouts, (until) => until, now, limit)
    },
    async signInKey(candidate) {
      signInKey ??= candidate
      return signInKey
    },
    async spendChallenge(key, expiresAt, now) {
      return rememberOnce(spent, key, expiresAt, now)
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
      const removed = deleteEnded(spent, (until) => until, now, limit)
      return removed + codes.deleteExpired(now, limit - removed)
    },
  }
}
