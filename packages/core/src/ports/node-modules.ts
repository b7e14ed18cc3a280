// The runtime's side of node modules: loading node sets, installing and removing packages, and
// which types the deployed flows use.
import type { ModuleDescriptor } from './modules.js'

/** A node set as the loader sees it. */
export interface NodeSetRef {
  id: string
  module: string
  name: string
}

export type LoadOutcome = { ok: true } | { ok: false; message: string }

export interface NodeSetLoader {
  /** Loads a node set's files. A failure is an outcome with a message fit to show, never a throw. */
  load(set: NodeSetRef): Promise<LoadOutcome>
}

/**
 * What to install: a package from the registry (`version` a semver range; absent, the newest), the
 * tarball at `url`, which must hold the package named `module`, or an uploaded tarball's bytes.
 */
export type InstallRequest =
  | { module: string; version?: string | undefined; url?: undefined; tarball?: undefined }
  | { module: string; url: string; version?: undefined; tarball?: undefined }
  | { tarball: Uint8Array; module?: undefined; version?: undefined; url?: undefined }

/** Why an install or removal did not happen. In every case nothing was changed. */
export type InstallFailure =
  /** The name, version or URL is not a valid package name, semver range or http(s) URL. */
  | { code: 'invalid_module_spec'; message: string }
  /** The settings do not allow it (the policy is decided before anything is fetched). */
  | { code: 'module_not_allowed'; message: string }
  /** The package manager failed, or the package is not a node module; `message` is fit to show. */
  | { code: 'install_failed'; message: string }
  /** The package manager ran past its time limit; what it did was undone. */
  | { code: 'install_timeout' }
  /** Another install or removal kept running past the wait allowed. */
  | { code: 'busy' }

/** The exact tarball an install fetched: its integrity (`sha512-…`, SRI) and its URL. */
export interface InstalledArtifact {
  integrity: string
  tarball: string
}

export interface ModuleInstaller {
  /**
   * Installs a module, all or nothing, and makes its node sets loadable. Returns the installed
   * module as discovery sees it, and for a registry install the tarball fetched when the package
   * manager recorded it; on failure the runtime's modules are exactly as they were.
   */
  install(
    request: InstallRequest,
  ): Promise<
    | { ok: true; module: ModuleDescriptor; artifact?: InstalledArtifact }
    | { ok: false; error: InstallFailure }
  >
  /** Uninstalls an installed module, all or nothing. */
  remove(name: string): Promise<{ ok: true } | { ok: false; error: InstallFailure }>
}

export interface TypeUsage {
  /**
   * The node types the deployed flows use now, or null when the flows cannot be read (the adapter
   * reports why): the core then refuses every disable rather than risk removing a type in use.
   */
  typesInUse(): Promise<ReadonlySet<string> | null>
  /** Which users of the flows (a fleet's instances) use any of these types; absent: not told. */
  usedBy?(types: readonly string[]): Promise<string[]>
}
