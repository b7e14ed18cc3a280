import type { FactorStore, PasswordPassed, TotpFactor } from '@flowadmin/core'
import { deleteEnded, takeLive } from './expiring.js'

/** TOTP factors and recovery codes; each call runs to its end before another begins, so it is atomic. */
export function createFactorStore(): FactorStore {
  const totp = new Map<string, TotpFactor>()
  const recovery = new Map<string, Set<string>>()
  const pending = new Map<string, PasswordPassed>()
  return {
    async startTotp(username, secret, now) {
      if (totp.get(username)?.confirmedAt != null) return false
      totp.set(username, {
        username,
        secret,
        createdAt: now,
        confirmedAt: null,
        confirmedAtSignIn: false,
        lastStep: null,
      })
      return true
    },
    async findTotp(username) {
      const factor = totp.get(username)
      return factor === undefined ? null : { ...factor }
    },
    async confirmTotp(username, secret, step, now, atSignIn) {
      const factor = totp.get(username)
      if (factor === undefined || factor.confirmedAt !== null || factor.secret !== secret) return false
      totp.set(username, { ...factor, confirmedAt: now, confirmedAtSignIn: atSignIn, lastStep: step })
      return true
    },
    async useTotpStep(username, step) {
      const factor = totp.get(username)
      if (factor === undefined || factor.confirmedAt === null) return false
      if (factor.lastStep !== null && factor.lastStep >= step) return false
      totp.set(username, { ...factor, lastStep: step })
      return true
    },
    async replaceRecoveryCodes(username, hashes) {
      recovery.set(username, new Set(hashes))
    },
    async useRecoveryCode(username, hash) {
      return recovery.get(username)?.delete(hash) ?? false
    },
    async countRecoveryCodes(username) {
      return recovery.get(username)?.size ?? 0
    },
    async deleteFactors(username) {
      const had = totp.delete(username)
      const codes = recovery.get(username)
      recovery.delete(username)
      return had || (codes !== undefined && codes.size > 0)
    },
    async savePendingSignIn(key, signIn) {
      pending.set(key, { ...signIn, scope: [...signIn.scope] })
    },
    async takePendingSignIn(key, now) {
      return takeLive(pending, key, now)
    },
    async deleteExpiredSignIns(now, limit) {
      return deleteEnded(pending, (signIn) => signIn.expiresAt, now, limit)
    },
  }
}
