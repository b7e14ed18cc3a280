import type { TokenRecord, TokenStore } from '@flowadmin/core'
import { deleteEnded } from './expiring.js'

// Records are copied in and out, so no caller can change what the store holds behind its back.
const copyToken = (record: TokenRecord): TokenRecord => ({ ...record, scope: [...record.scope] })

const byCreation = (a: TokenRecord, b: TokenRecord) =>
  a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)

/** Tokens by hash, and by id. */
export function createTokenStore(): TokenStore {
  const records = new Map<string, TokenRecord>()
  /** hash by id: the second key of every record. */
  const hashes = new Map<string, string>()
  const remove = (hash: string) => {
    const record = records.get(hash)
    if (!record) return false
    records.delete(hash)
    hashes.delete(record.id)
    return true
  }
  return {
    async save(record) {
      remove(record.hash)
      const sameId = hashes.get(record.id)
      if (sameId !== undefined) remove(sameId)
      records.set(record.hash, copyToken(record))
      hashes.set(record.id, record.hash)
    },
    async findByHash(hash) {
      const record = records.get(hash)
      return record ? copyToken(record) : null
    },
    async findById(id) {
      const record = records.get(hashes.get(id) ?? '')
      return record ? copyToken(record) : null
    },
    async list(username) {
      const found: TokenRecord[] = []
      for (const record of records.values()) {
        if (username === null || record.username === username) found.push(copyToken(record))
      }
      return found.sort(byCreation)
    },
    async usernames() {
      return [...new Set([...records.values()].map((record) => record.username))].sort()
    },
    async touch(id, usedAt, address) {
      const record = records.get(hashes.get(id) ?? '')
      if (!record) return
      record.lastUsedAt = usedAt
      record.lastAddress = address
    },
    async delete(id) {
      const hash = hashes.get(id)
      return hash !== undefined && remove(hash)
    },
    async deleteByUser(username) {
      let removed = 0
      for (const [hash, record] of records) {
        if (record.username === username && remove(hash)) removed++
      }
      return removed
    },
    async deleteExpired(now, limit) {
      return deleteEnded(records, (record) => record.expiresAt, now, limit, remove)
    },
    async countLive(now) {
      const live = { session: 0, api: 0 }
      for (const record of records.values()) {
        if (record.expiresAt === null || record.expiresAt > now) live[record.kind]++
      }
      return live
    },
  }
}
