import type { SqliteStores } from '@flowadmin/adapter-sqlite'
import { tokenRecord } from '@flowadmin/testkit'
import { describe, expect, it } from 'vitest'
import { tempFolder } from './temp.js'

/**
 * What `close()` does to changes still waiting for their commit, for a driver's `open`: each one
 * acknowledged is on disk when the file is opened again, and none is lost or left hanging.
 */
export function describeClose(name: string, open: (path: string) => SqliteStores): void {
  const temp = tempFolder()

  describe(`closing ${name} stores`, () => {
    it('commits the writes queued in the same tick first: each acknowledged one is there on reopening', async () => {
      const file = temp.file()
      const stores = open(file)
      const saves = Array.from({ length: 20 }, (_, i) => stores.tokens.save(tokenRecord(`h${i}`)))
      const upsert = stores.modules.upsert({
        name: 'm',
        version: '1.0.0',
        sets: [{ name: 's', types: ['t'] }],
      })
      const closed = stores.close()
      const outcomes = await Promise.allSettled([...saves, upsert])
      await closed
      expect(outcomes.filter((outcome) => outcome.status === 'rejected')).toEqual([])

      const again = open(file)
      expect(await again.tokens.list(null)).toHaveLength(20)
      expect(await again.modules.find('m')).toMatchObject({ name: 'm', version: '1.0.0' })
      await again.close()
    })

    it('refuses a write asked for once it closed, and so never acknowledges one it did not keep', async () => {
      const file = temp.file()
      const stores = open(file)
      await stores.close()
      await expect(stores.tokens.save(tokenRecord('late'))).rejects.toThrow()
      const again = open(file)
      expect(await again.tokens.findByHash('late')).toBeNull()
      await again.close()
    })

    it('closes once however often it is asked, each asking waiting for the commit', async () => {
      const file = temp.file()
      const stores = open(file)
      const save = stores.tokens.save(tokenRecord('once'))
      await Promise.all([stores.close(), stores.close()])
      await save
      await stores.close()
      const again = open(file)
      expect(await again.tokens.findByHash('once')).toEqual(tokenRecord('once'))
      await again.close()
    })
  })
}
