// What the parts of the store contract (one a store: tokens, modules, throttle, ...) share.
import type { Stores, WaitingBounds } from '@flowadmin/core'

/**
 * One store's part of the store contract, run inside describeStoreContract: `stores()` is the
 * fresh stores of the running test; `twoConnections()` gives `racing(i)`, which alternates between
 * two connections to the same data.
 */
export type ContractPart = (
  stores: () => Stores,
  twoConnections: () => Promise<(i: number) => Stores>,
) => void

/** The contract's "now": 2026-01-01T00:00:00Z. */
export const T0 = Date.UTC(2026, 0, 1)
export const MINUTE = 60_000

/** Bounds no contract test reaches unless it means to. */
export const WIDE: WaitingBounds = { perAddress: 1000, total: 1000 }
