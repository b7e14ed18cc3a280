export { type CoreWithDoublesOptions, createCoreWithDoubles } from './core-with-doubles.js'
export { describeCore } from './domain/index.js'
export { adminLogin, createCoreOverStores, toolsModule } from './domain-over-stores.js'
export {
  createEventRecorder,
  createFakeIdentityProvider,
  createFakeInstaller,
  createFakeLoader,
  createFakeTotp,
  createFakeTypeUsage,
  createFixedClock,
  createPlainHasher,
  createSeededNumbers,
  createSeededRandom,
  type FixedClock,
  holdVerifications,
  type PlainHasher,
} from './doubles.js'
export { createFakeWebAuthn, type FakeAnswer } from './fake-webauthn.js'
export { instanceReport } from './fleet-contract.js'
export { passkeyCredential } from './passkey-contract.js'
export {
  describeFileStoreContract,
  describeStoreContract,
  type OpenedStores,
  type OpenStores,
  type StoreFactory,
  tokenRecord,
} from './store-contract.js'
export { describeTokenLifecycle } from './token-lifecycle.js'
export { ownEntry, trailEntry } from './trail-entries.js'
export { describeUpgradeContract, type OldDatabase, type UpgradeDialect } from './upgrade-contract.js'
export {
  createSignal,
  DEFAULT_WAIT_MS,
  type Signal,
  type WaitOptions,
  waitFor,
  withDeadline,
} from './waiting.js'
export { type CoreWorld, type CoreWorldOptions, createCoreWorld, WORLD_ADDRESS } from './world.js'
