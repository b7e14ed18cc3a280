import type { PasskeyChallenge, PasskeyCredential, PasskeyStore } from '@flowadmin/core'

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
        let total = 0
        let mine = 0
        for (const other of challenges.values()) {
          if (other.purpose !== 'sign_in' || other.expiresAt <= now) continue
          total++
          if (other.address === challenge.address) mine++
        }
        if (mine >= bounds.perAddress) return 'address_full'
        if (total >= bounds.total) return 'full'
      }
      challenges.set(key, { ...challenge })
      return 'saved'
    },
    async takeChallenge(key, now) {
      const challenge = challenges.get(key)
      challenges.delete(key)
      return challenge === undefined || challenge.expiresAt <= now ? null : challenge
    },
    async deleteExpiredChallenges(now, limit) {
      let removed = 0
      for (const [key, challenge] of challenges) {
        if (removed >= limit) break
        if (challenge.expiresAt <= now && challenges.delete(key)) removed++
      }
      return removed
    },
  }
}
