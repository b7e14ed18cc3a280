// Secret flow variables sealed for the store with AES-256-GCM, under a key derived from the
// configured one, each bound to its scope and name: a sealed value moved to another variable's
// row does not open.
import type { VariableSealer } from '@flowadmin/core'
import { derivedKey, openText, sealText } from './sealing.js'

/** The sealer of secret flow variables over `key` (the `fleet.flows.key` setting). */
export function createVariableSealer(key: string): VariableSealer {
  const aesKey = derivedKey(key, 'flow variables v1')
  const boundTo = (context: string) => Buffer.from(`flowadmin flow variable\n${context}`, 'utf8')
  return {
    seal: (context, value) => sealText(aesKey, boundTo(context), value),
    open: (context, sealed) => openText(aesKey, boundTo(context), sealed),
  }
}
