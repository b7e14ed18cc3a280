import type { Stores } from '@flowadmin/core'
import { afterEach, beforeEach, describe } from 'vitest'
import type { ContractPart } from './contract-part.js'
import { describeEnrolmentContract } from './enrolment-contract.js'
import { describeFactorContract } from './factor-contract.js'
import { describeFleetContract } from './fleet-contract.js'
import { describeGroupContract } from './group-contract.js'
import { describeModuleContract } from './module-contract.js'
import { describePasskeyContract } from './passkey-contract.js'
import { describeRolloutContract } from './rollout-contract.js'
import { describeSnapshotContract } from './snapshot-contract.js'
import { describeSsoContract } from './sso-contract.js'
import { describeThrottleContract } from './throttle-contract.js'
import { describeTokenContract } from './token-contract.js'
import { describeTrailContract } from './trail-contract.js'

export { tokenRecord } from './token-contract.js'

/** Stores under test: every store port, and a way to release them. */
export type OpenedStores = Stores & { close(): Promise<void> }

/** Opens fresh stores under test (empty). */
export type OpenStores = () => Promise<OpenedStores>

/** How the contract reaches a store: fresh stores, and a second connection to the same data. */
export interface StoreFactory {
  /** Fresh stores over empty data. */
  open: OpenStores
  /**
   * Another connection to the data the last `open` returned, as another process or instance
   * would have: another handle on the SQLite file, another PostgreSQL pool (for a store living
   * in the process's memory, the same maps). The racing tests split their calls between both.
   */
  connect: OpenStores
}

/** Each store's part of the contract, in the order they run. */
const PARTS: readonly ContractPart[] = [
  describeTokenContract,
  describeModuleContract,
  describeFleetContract,
  describeEnrolmentContract,
  describeGroupContract,
  describeSnapshotContract,
  describeRolloutContract,
  describePasskeyContract,
  describeThrottleContract,
  describeSsoContract,
  describeTrailContract,
  describeFactorContract,
]

/**
 * The contract every store adapter passes unchanged. Each test opens a fresh store; none depends
 * on another's order. Time is a parameter, so no test sleeps.
 */
export function describeStoreContract(name: string, factory: StoreFactory): void {
  describe(`store contract: ${name}`, () => {
    let stores: OpenedStores
    let others: OpenedStores[] = []
    beforeEach(async () => {
      stores = await factory.open()
    })
    afterEach(async () => {
      for (const other of others) await other.close()
      others = []
      await stores.close()
    })
    /**
     * The stores and a second connection to the same data; `racing(i)` is one of them, taking
     * turns, so that calls made in a row race between the two connections.
     */
    const twoConnections = async () => {
      const other = await factory.connect()
      others.push(other)
      return (i: number) => (i % 2 === 0 ? stores : other)
    }

    for (const part of PARTS) part(() => stores, twoConnections)
  })
}

/**
 * The contract for stores kept in a database file: each test opens `open(file)` over a new file
 * from `newFile()`, and a second connection is another handle on that same file.
 */
export function describeFileStoreContract(
  name: string,
  open: (file: string) => OpenedStores,
  newFile: () => string,
): void {
  let file: string
  describeStoreContract(name, {
    open: async () => {
      file = newFile()
      return open(file)
    },
    connect: async () => open(file),
  })
}
