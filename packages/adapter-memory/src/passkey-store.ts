import type { PasskeyChallenge, PasskeyCredential, PasskeyStore } from '@flowadmin/core'
import { deleteEnded, takeLive } from './expiring.js'
import { waitingVerdict } from './waiting.js'

const copy = (credential: PasskeyCredential): PasskeyCredential => ({
  ...credential,
  transports: [...credential.transports],
})

/** Passkeys and their challenges; each call runs to its end before another begins, so it is atomic. */
export function createPasskeyStore(): PasskeyStore {
  const credentials = new Map<string, PasskeyCredential>()
  const challenges = new Map<string, PasskeyChallenge>()
  return {
    async save(credential) {
      credentials.delete(credential.id)
      credentials.set(credential.id, copy(credential))
    },
    async list(username) {
      return [...credentials.values()]
        .filter((credential) => credential.username === username)
        .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .map(copy)
    },
    async find(id) {
      const credential = credentials.get(id)
      return credential === undefined ? null : copy(credential)
    },
    async updateUse(id, counter, backedUp, now) {
      const credential = credentials.get(id)
      if (credential === undefined) return false
      if ((credential.counter !== 0 || counter !== 0) && credential.counter >= counter) return false
      credentials.set(id, { ...credential, counter, backedUp, lastUsedAt: now })
      return true
    },
    async delete(username, id) {
      if (credentials.get(id)?.username !== username) return false
      return credentials.delete(id)
    },
    async deleteAll(username) {
      let removed = 0
      for (const [id, credential] of credentials) {
        if (credential.username === username && credentials.delete(id)) removed++
      }
      return removed
    },
    async saveChallenge(key, challenge, bounds, now) {
      if (challenge.purpose === 'sign_in') {
        const signIn = (other: PasskeyChallenge) => other.purpose === 'sign_in'
        const allowed = waitingVerdict(challenges.values(), challenge.address, bounds, now, signIn)
        if (allowed !== 'saved') return allowed
      }
      challenges.set(key, { ...challenge })
      return 'saved'
    },
    async takeChallenge(key, now) {
      return takeLive(challenges, key, now)
    },
    async deleteExpiredChallenges(now, limit) {
      return deleteEnded(challenges, (challenge) => challenge.expiresAt, now, limit)
    },
  }
}
