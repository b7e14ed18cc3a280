import { spawn } from 'node:child_process'
import { cp, mkdir, rename, rm, stat, writeFile } from 'node:fs/promises'
import * as path from 'node:path'
import {
  createTaskQueue,
  type InstalledArtifact,
  type InstallFailure,
  type InstallRequest,
  type ModuleDescriptor,
  type ModuleInstaller,
} from '@flowadmin/core'
import type { Log } from '../log.js'
import { type DiscoveredModule, discoverModules, toDescriptors } from './modules-on-disk.js'
import { installedArtifact } from './npm-artifact.js'
import { describeNpmFailure } from './npm-failure.js'
import { claimStaging } from './npm-staging.js'
import type { PalettePolicy } from './palette-policy.js'
import { readTarballManifest } from './tarball.js'

// Installs and removes node modules with npm, all or nothing. npm works on a copy of the userDir's
// package.json, lockfile, .npmrc and node_modules in a staging folder inside userDir; only when it
// succeeded, and the result is a node module the policy allows, is the copy put in place with a
// few renames. A failure, a timeout or a crash while npm runs leaves userDir as it was (the
// staging folders: npm-staging.ts).

export interface NpmInstallerOptions {
  userDir: string
  policy: PalettePolicy
  /** The registry npm uses; null: npm's own configuration (userDir/.npmrc, ~/.npmrc, the default). */
  registry: string | null
  /** Lets packages run their install scripts; off by default (`--ignore-scripts`). */
  allowScripts: boolean
  /** Milliseconds npm may run; beyond it, it is killed and the install undone. */
  timeoutMs: number
  /** Milliseconds a request waits for the install or removal before it; beyond it, `busy`. */
  waitMs: number
  /** The npm command. Default: `npm` on the PATH. */
  npm?: string
  /** Receives a summary of each npm run with its output (`info` after a success, `warning` after a failure). */
  log: Log
  /** Called with every node module in userDir after a change, so the loader can find their files. */
  onChange: (modules: DiscoveredModule[]) => void
}

const FILES = ['package.json', 'package-lock.json', 'npm-shrinkwrap.json', '.npmrc'] as const
/** An uploaded tarball, inside the staging folder; not kept (the module is installed unsaved). */
const UPLOAD = 'upload.tgz'
const FRESH_PACKAGE = {
  name: 'flowadmin-user-modules',
  description: 'The node modules of this flowadmin userDir',
  private: true,
  dependencies: {},
}

type Outcome<T> = ({ ok: true } & T) | { ok: false; error: InstallFailure }
const failed = (error: InstallFailure) => ({ ok: false as const, error })

export function createNpmInstaller(options: NpmInstallerOptions): ModuleInstaller {
  const { userDir, policy, log } = options
  const queue = createTaskQueue()
  /** Runs `task` after the install or removal before it; `busy` when that one runs past `waitMs`. */
  async function oneAtATime<T>(task: () => Promise<T>): Promise<T | Outcome<never>> {
    const signal = AbortSignal.timeout(options.waitMs)
    try {
      // The lane is unbounded, so run never refuses.
      return await (queue.run(task, { signal }) as Promise<T>)
    } catch (error) {
      if (signal.aborted && error === signal.reason) return failed({ code: 'busy' })
      throw error
    }
  }

  /** Copies what npm reads into the staging folder `dir`. */
  async function stage(dir: string): Promise<void> {
    for (const file of FILES) {
      await cp(path.join(userDir, file), path.join(dir, file)).catch((error: NodeJS.ErrnoException) => {
        if (error.code !== 'ENOENT') throw error
      })
    }
    // Without a package.json of its own, npm would climb to a parent folder's.
    if (!(await exists(path.join(dir, 'package.json')))) {
      await writeFile(path.join(dir, 'package.json'), `${JSON.stringify(FRESH_PACKAGE, null, 2)}\n`)
    }
    if (await exists(path.join(userDir, 'node_modules'))) {
      await cp(path.join(userDir, 'node_modules'), path.join(dir, 'node_modules'), {
        recursive: true,
        verbatimSymlinks: true,
      })
    }
  }

  /**
   * npm prunes what package.json does not list, so node modules copied into node_modules by hand
   * would go with any install. They are put back, except `except` (the one being removed).
   */
  async function keepOthers(dir: string, before: DiscoveredModule[], except: string | null): Promise<void> {
    for (const module of before) {
      if (module.name === except) continue
      const target = path.join(dir, 'node_modules', ...module.name.split('/'))
      if (await exists(target)) continue
      await cp(module.dir, target, { recursive: true, verbatimSymlinks: true })
    }
  }

  /** Puts the staged files and node_modules in place of userDir's, then drops the old ones. */
  async function commit(dir: string): Promise<void> {
    const old = path.join(dir, '.old')
    await mkdir(old)
    const moves: Array<[string, string]> = []
    try {
      for (const name of ['node_modules', ...FILES.filter((file) => file !== '.npmrc')]) {
        const current = path.join(userDir, name)
        const staged = path.join(dir, name)
        if (await exists(current)) {
          await rename(current, path.join(old, name))
          moves.push([path.join(old, name), current])
        }
        if (await exists(staged)) {
          await rename(staged, current)
          moves.push([current, staged])
        }
      }
    } catch (error) {
      // Undo in reverse so userDir is as it was.
      for (const [from, to] of moves.reverse()) await rename(from, to).catch(() => {})
      throw error
    }
  }

  /** Runs npm in `dir` for the module `wanted`; null on success, else the failure. */
  function runNpm(dir: string, args: string[], wanted: string): Promise<InstallFailure | null> {
    return new Promise((resolve) => {
      const output: string[] = []
      const child = spawn(options.npm ?? 'npm', args, {
        cwd: dir,
        env: npmEnvironment(),
        shell: false,
        // Its own process group, so a timeout kills npm and everything it started.
        detached: true,
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      const collect = (chunk: Buffer) => output.push(chunk.toString('utf8'))
      child.stdout.on('data', collect)
      child.stderr.on('data', collect)
      let timedOut = false
      const timer = setTimeout(() => {
        timedOut = true
        killGroup(child.pid)
      }, options.timeoutMs)
      const report = (summary: string, level: 'info' | 'warning' = 'warning') => {
        // npm's own output, a line an item, beside the summary.
        const npm = output
          .join('')
          .split('\n')
          .filter((line) => line.trim() !== '')
        log(level, summary, npm.length > 0 ? { npm } : {})
      }
      child.once('error', (error) => {
        clearTimeout(timer)
        report(`npm could not be started: ${error.message}`)
        resolve({ code: 'install_failed', message: 'npm could not be started on the server' })
      })
      child.once('close', (code) => {
        clearTimeout(timer)
        if (timedOut) {
          report(`npm ${args[0]} ran past ${options.timeoutMs} ms and was stopped; nothing was changed`)
          return resolve({ code: 'install_timeout' })
        }
        if (code === 0) {
          report(`npm ${args[0]} ${args.at(-1)} succeeded`, 'info')
          return resolve(null)
        }
        report(`npm ${args[0]} failed (exit ${code}); nothing was changed`)
        const said = output.join('')
        const npmCode = /npm (?:error|ERR!) code (E[A-Z0-9]+)/.exec(said)?.[1]
        const words =
          describeNpmFailure(said, wanted, options.registry) ??
          `npm ${args[0]} failed${npmCode ? ` (${npmCode})` : ''}`
        resolve({ code: 'install_failed', message: `${words}; nothing was changed` })
      })
    })
  }

  const common = () => [
    '--no-audit',
    '--no-fund',
    '--no-update-notifier',
    '--no-progress',
    '--omit=dev',
    ...(options.allowScripts ? [] : ['--ignore-scripts']),
    ...(options.registry === null ? [] : ['--registry', options.registry]),
  ]

  /** Stages, runs npm for the module `wanted`, checks, commits; the staging folder is always removed. */
  async function change<T>(
    args: string[],
    wanted: string,
    except: string | null,
    check: (staged: DiscoveredModule[]) => Outcome<T>,
    prepare: (dir: string) => Promise<void> = async () => {},
  ): Promise<Outcome<T>> {
    const before = await discoverModules(userDir)
    const staging = await claimStaging(userDir)
    const { dir } = staging
    try {
      await stage(dir)
      await prepare(dir)
      const problem = await runNpm(dir, args, wanted)
      if (problem !== null) return failed(problem)
      await keepOthers(dir, before, except)
      const verdict = check(await discoverModules(dir))
      if (!verdict.ok) return verdict
      await commit(dir)
      options.onChange(await discoverModules(userDir))
      return verdict
    } finally {
      staging.release()
      await rm(dir, { recursive: true, force: true }).catch(() => {})
    }
  }

  return {
    async install(request: InstallRequest) {
      const refusal = policy.check(request)
      if (refusal !== null) return failed(refusal)
      let name = request.module
      let spec = request.url ?? `${request.module}@${request.version ?? 'latest'}`
      if (request.tarball !== undefined) {
        // An upload is judged by the package.json it holds, before npm sees it.
        const manifest = await readTarballManifest(request.tarball)
        if (!manifest.ok) return failed({ code: 'invalid_module_spec', message: manifest.message })
        const denied = policy.checkInstalled(manifest.name, manifest.version)
        if (denied !== null) return failed(denied)
        name = manifest.name
        spec = `./${UPLOAD}`
      }
      const wanted = name as string
      const fromRegistry = request.url === undefined && request.tarball === undefined
      const install = [
        'install',
        ...common(),
        // The lockfile names the tarball it came from, whatever npm's configuration says: the
        // fleet's instances fetch that one (npm-artifact.ts).
        '--omit-lockfile-registry-resolved=false',
        request.tarball === undefined ? '--save' : '--no-save',
        '--',
        spec,
      ]
      return oneAtATime(async () => {
        const outcome = await change<{ module: ModuleDescriptor }>(
          install,
          wanted,
          null,
          (staged) => {
            const module = staged.find((candidate) => candidate.name === wanted)
            if (module === undefined) {
              return failed({
                code: 'install_failed',
                message:
                  request.url === undefined
                    ? `${wanted} is not a node module`
                    : `the tarball is not the node module ${wanted}`,
              })
            }
            const refusal = policy.checkInstalled(module.name, module.version)
            if (refusal !== null) return failed(refusal)
            return { ok: true, module: toDescriptors([module])[0] as ModuleDescriptor }
          },
          async (dir) => {
            if (request.tarball !== undefined) await writeFile(path.join(dir, UPLOAD), request.tarball)
          },
        )
        if (!outcome.ok || !fromRegistry) return outcome
        // The exact tarball npm fetched and checked, which the fleet's instances install.
        const artifact = await installedArtifact(userDir, wanted, outcome.module.version)
        return artifact === null ? outcome : { ...outcome, artifact }
      }) as Promise<Outcome<{ module: ModuleDescriptor; artifact?: InstalledArtifact }>>
    },

    async remove(name: string) {
      if (!policy.canRemove())
        return failed({ code: 'module_not_allowed', message: 'Removing modules is not allowed' })
      return oneAtATime(() =>
        change<Record<never, never>>(
          ['uninstall', ...common(), '--save', '--', name],
          name,
          name,
          (staged) =>
            staged.some((module) => module.name === name)
              ? failed({ code: 'install_failed', message: `npm did not remove ${name}` })
              : { ok: true },
        ),
      ) as Promise<Outcome<Record<never, never>>>
    },
  }
}

/**
 * The environment of npm: the server's, without the `npm_*` variables a package manager that
 * started the server may set (they would override userDir/.npmrc), keeping proxy and CA settings.
 */
function npmEnvironment(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {}
  for (const [name, value] of Object.entries(process.env)) {
    if (!/^npm_/i.test(name) || /proxy|cafile|strict_ssl|^npm_config_cache$/i.test(name)) env[name] = value
  }
  env.NO_UPDATE_NOTIFIER = '1'
  return env
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return
  try {
    process.kill(-pid, 'SIGKILL')
  } catch {
    // Already gone.
  }
}

async function exists(file: string): Promise<boolean> {
  return (await stat(file).catch(() => null)) !== null
}
