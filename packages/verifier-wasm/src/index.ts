export type { Argon2Cost, WasmSource } from './argon2-wasm.js'
export { ARGON2ID_COST, createWasmVerifier, type WasmVerifier } from './verifier.js'
