// What the Node, Bun and Deno examples share at start: the settings from the environment, the
// stores their runtime opens, argon2 in WebAssembly read from disk, and the sweeper.
import { createWasmVerifier } from '@flowadmin/verifier-wasm'
import { loadArgon2Wasm } from '@flowadmin/verifier-wasm/load'
import { createAdmin, readAdminAuth, SWEEP_INTERVAL_MS } from './admin.js'

/**
 * The admin over `openStores(file)`, with `adminAuth` from the JSON text `adminAuthText`. When
 * either is unusable it prints why (no stack) and calls `exit(1)`. Sweeps expired records once a
 * minute until `stopSweeping()`.
 */
export async function startAdmin({ adminAuthText, file, openStores, exit }) {
  try {
    const adminAuth = readAdminAuth(adminAuthText)
    const stores = openStores(file ?? 'flowadmin.db')
    const verifier = await createWasmVerifier(await loadArgon2Wasm())
    const { app, core } = await createAdmin({ stores, verifier, adminAuth })
    const sweeper = setInterval(() => core.sweep().catch((error) => console.error(error)), SWEEP_INTERVAL_MS)
    return { app, stores, stopSweeping: () => clearInterval(sweeper) }
  } catch (error) {
    console.error(`flowadmin cannot start: ${error.message}`)
    return exit(1)
  }
}
