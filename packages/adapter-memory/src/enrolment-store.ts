import type { EnrolmentRecord, EnrolmentStore, InstanceCredential } from '@flowadmin/core'

// Records are copied in and out, so no caller shares what is stored.
const copyEnrolment = (record: EnrolmentRecord): EnrolmentRecord => ({
  ...record,
  groups: [...record.groups],
})

/** Enrolment tokens and instance credentials over Maps; each call is one synchronous pass. */
export function createEnrolmentStore(): EnrolmentStore {
  const enrolments = new Map<string, EnrolmentRecord>()
  const credentials = new Map<string, InstanceCredential>()
  const byHash = (hash: string) => [...enrolments.values()].find((record) => record.hash === hash)
  const live = (credential: InstanceCredential | undefined): credential is InstanceCredential =>
    credential !== undefined && credential.revokedAt === null
  return {
    async saveEnrolment(record) {
      enrolments.set(record.id, copyEnrolment(record))
    },
    async findEnrolment(hash) {
      const found = byHash(hash)
      return found === undefined ? null : copyEnrolment(found)
    },
    async enrolments() {
      return [...enrolments.values()]
        .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
        .map(copyEnrolment)
    },
    async deleteEnrolment(id) {
      return enrolments.delete(id)
    },
    async deleteSpentEnrolments(now, limit) {
      let deleted = 0
      for (const record of [...enrolments.values()]) {
        if (deleted >= limit) break
        if (record.expiresAt <= now || record.left <= 0) {
          enrolments.delete(record.id)
          deleted++
        }
      }
      return deleted
    },
    async enrol(hash, credential, max, now) {
      const token = byHash(hash)
      if (token === undefined || token.left <= 0 || token.expiresAt <= now) return 'spent'
      if (live(credentials.get(credential.instance))) return 'conflict'
      const held = [...credentials.values()].filter(
        (held) => live(held) && held.resourceServer === credential.resourceServer,
      ).length
      if (held >= max) return 'full'
      token.left--
      credentials.set(credential.instance, { ...credential })
      return 'enrolled'
    },
    async credential(instance) {
      const found = credentials.get(instance)
      return found === undefined ? null : { ...found }
    },
    async credentials() {
      return [...credentials.values()]
        .sort((a, b) => (a.instance < b.instance ? -1 : a.instance > b.instance ? 1 : 0))
        .map((credential) => ({ ...credential }))
    },
    async setNext(instance, nextHash) {
      const found = credentials.get(instance)
      if (!live(found)) return false
      found.nextHash = nextHash
      return true
    },
    async promote(instance, nextHash, now) {
      const found = credentials.get(instance)
      if (!live(found) || found.nextHash !== nextHash) return false
      found.secretHash = nextHash
      found.nextHash = null
      found.rotateAsked = false
      found.rotatedAt = now
      return true
    },
    async askRotate(instance) {
      const found = credentials.get(instance)
      if (!live(found)) return false
      found.rotateAsked = true
      return true
    },
    async revoke(instance, resourceServer, now) {
      const found = credentials.get(instance)
      if (found === undefined) {
        credentials.set(instance, {
          instance,
          resourceServer,
          secretHash: '',
          nextHash: null,
          enrolledAt: now,
          enrolledBy: null,
          rotateAsked: false,
          rotatedAt: null,
          revokedAt: now,
        })
        return true
      }
      if (found.revokedAt !== null) return false
      found.revokedAt = now
      found.nextHash = null
      found.rotateAsked = false
      return true
    },
  }
}
