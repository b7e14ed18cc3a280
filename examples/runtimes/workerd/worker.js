// flowadmin on workerd, the runtime of Cloudflare Workers: the memory store per isolate, argon2
// in WebAssembly from a module binding (workerd compiles no WebAssembly from bytes at run time).
// Built by build.mjs into dist/, served with config.capnp.
import { createMemoryStores } from '@flowadmin/adapter-memory'
import { createWasmVerifier } from '@flowadmin/verifier-wasm'
import { createAdmin, readAdminAuth, SWEEP_INTERVAL_MS } from '../admin.js'
import argon2Wasm from './argon2.wasm'

/** The admin of this isolate, made at its first request: each isolate has its own memory store. */
let admin = null
let lastSweep = Date.now()

async function start(env) {
  const adminAuth = readAdminAuth(env.FLOWADMIN_ADMIN_AUTH)
  return createAdmin({
    stores: createMemoryStores(),
    verifier: await createWasmVerifier(argon2Wasm),
    adminAuth,
  })
}

export default {
  async fetch(request, env, ctx) {
    admin ??= start(env)
    let started
    try {
      started = await admin
    } catch (error) {
      console.error(`flowadmin cannot start: ${error.message}`)
      return Response.json({ code: 'unexpected_error', message: 'Internal error' }, { status: 500 })
    }
    // Workers have no timers between requests: sweep, at most once a minute, after answering.
    if (Date.now() - lastSweep >= SWEEP_INTERVAL_MS) {
      lastSweep = Date.now()
      ctx.waitUntil(started.core.sweep())
    }
    // Cloudflare's edge sets CF-Connecting-IP; without it in front, whoever calls sets it.
    return started.app.fetch(request, { address: request.headers.get('cf-connecting-ip') ?? undefined })
  },
}
