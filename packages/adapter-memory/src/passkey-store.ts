import type { PasskeyCredential, PasskeyStore } from '@flowadmin/core'

const copy = (credential: PasskeyCredential): PasskeyCredential => ({
  ...credential,
  transports: [...credential.transports],
})

/** Passkeys; each call runs to its end before another begins, so it is atomic. */
export function createPasskeyStore(): PasskeyStore {
  const credentials = new Map<string, PasskeyCredential>()
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
  }
}
