import { stat } from 'node:fs/promises'
import { createHttpApp } from '@flowadmin/adapter-http'
import { consolePaths, createConsole, SIGN_IN_SCRIPT } from '@flowadmin/console'
import { type LoginQueueBounds, messageOf } from '@flowadmin/core'
import { getPath } from 'hono/utils/url'
import { createArgon2Verifier, DEFAULT_VERIFY_CONCURRENCY } from '../adapters/argon2.js'
import { createAuditLog } from '../adapters/audit.js'
import { fanOut } from '../adapters/fan-out.js'
import { createMetrics } from '../adapters/metrics.js'
import { createDiskLoader, discoverModules, toDescriptors } from '../adapters/modules-on-disk.js'
import { sweepStaging } from '../adapters/npm-staging.js'
import { createTrailRecorder } from '../adapters/trail-recorder.js'
import { hashWarnings } from '../config/settings/hash-warnings.js'
import { ldapWarnings } from '../config/settings/ldap.js'
import { resolveSettings } from '../config/settings/load.js'
import { exampleMfaKeyRefusal } from '../config/settings/mfa.js'
import { EXIT_USAGE, SettingsError, StartupError } from '../errors.js'
import { isLoopback, socketAddress } from '../http/addresses.js'
import { type Listener, listen, originOf } from '../http/listen.js'
import { metricsFetch } from '../http/metrics-listener.js'
import { clientAddressOf, parseTrustedProxies } from '../http/proxy.js'
import { createReadiness } from '../http/readiness.js'
import { createLogger, logTo } from '../log.js'
import { VERSION } from '../package-files.js'
import { createServerCore } from './core.js'
import { type RunningFleet, startFleet } from './fleet.js'
import { sizeLoginQueue } from './login-queue-sizing.js'
import { onFirstUse } from './on-first-use.js'
import type { RunningServer, ServerOptions } from './options.js'
import { createOutageLog } from './outage-log.js'
import { refuseReload, reloadSettings, reopenAuditLog } from './reload.js'
import { openStores } from './stores.js'
import { GROUP_REFRESH_MS, startSweeper } from './sweeper.js'

/**
 * Starts the service: settings, stores, core, HTTP app, listener. Start-up failures are
 * StartupErrors (SettingsError for the settings) whose message is fit to print as it is.
 */
export async function startServer(options: ServerOptions = {}): Promise<RunningServer> {
  const cwd = options.cwd ?? process.cwd()
  const logger = options.logger ?? createLogger()
  const log = logTo(logger)
  const warn = (message: string) => log('warning', message)
  const settings = await resolveSettings(options, cwd)

  if (settings.adminAuth === null && !isLoopback(settings.uiHost) && !options.allowOpenAdmin) {
    throw new StartupError(
      `refusing to listen on ${settings.uiHost}: adminAuth is not set, so anyone who can reach that address ` +
        'could administer this service. Set adminAuth, listen on 127.0.0.1, or pass --allow-open-admin.',
      EXIT_USAGE,
    )
  }
  const exampleKey = exampleMfaKeyRefusal(settings.adminAuth?.mfa, options.allowExampleMfaKey === true)
  if (exampleKey !== null) throw new SettingsError(exampleKey)
  const userDir = await stat(settings.userDir).catch(() => null)
  if (!userDir?.isDirectory()) {
    throw new SettingsError(`userDir ${settings.userDir} is not an existing folder`)
  }

  if (settings.fleet !== null && (settings.adminAuth?.resourceServers ?? []).length === 0) {
    throw new SettingsError(
      'fleet.modules needs adminAuth.resourceServers: the Node-RED instances authenticate as one of them',
    )
  }

  const servers = settings.adminAuth?.resourceServers ?? []
  if (settings.fleet !== null && !servers.some((server) => server.fleet === true)) {
    throw new SettingsError(
      'fleet.modules needs a resource server marked for the fleet: set "fleet": true on the one the Node-RED instances use (adminAuth.resourceServers[i].fleet); see docs/fleet.md#turning-it-on',
    )
  }
  for (const server of servers) {
    if (settings.fleet !== null && server.fleet === true) {
      warn(
        `resource server ${server.id}: its instances may join the fleet with its shared secret, the weaker mode (any instance holding it can act as any other); enrol each instance with a credential of its own: docs/fleet.md#enrolment`,
      )
    }
  }

  const metricsListener = typeof settings.metrics === 'object' ? settings.metrics : null
  if (metricsListener !== null && !isLoopback(metricsListener.host)) {
    throw new SettingsError(
      `metrics.host: ${metricsListener.host} is not a loopback address: the metrics listener needs no token, so it only listens on 127.0.0.1, ::1 or localhost`,
    )
  }

  const audit = createAuditLog(settings.auditLog, options.stdout, (message, fields) =>
    log('error', message, fields),
  )
  const cleanup: Array<() => Promise<void> | void> = [() => audit.close()]
  const undo = async () => {
    for (const step of cleanup.reverse()) await step()
  }
  try {
    const opened = await openStores(settings)
    const { storage, postgres } = opened
    cleanup.push(() => opened.stores.close())
    const metrics = settings.metrics === 'off' ? null : createMetrics()
    const stores = metrics === null ? opened.stores : metrics.instrument(opened.stores)
    // flowadmin's own events go to the trail too; what waits is appended before the store closes.
    const trail = createTrailRecorder(stores.trail, log)
    cleanup.push(() => trail.close())
    const events = fanOut(audit, trail, ...(metrics === null ? [] : [metrics.events]))

    const argon2 = await createArgon2Verifier()
    const configured = settings.adminAuth?.loginQueue ?? {}
    const queueing = sizeLoginQueue(configured, DEFAULT_VERIFY_CONCURRENCY, settings.adminAuth !== null)
    const loginQueue = queueing.queue
    // The core exists only below; the first verification cannot end before it does.
    let resize: (bounds: LoginQueueBounds) => void = () => {}
    const verifier = queueing.measuring(argon2, (bounds) => resize(bounds))

    await sweepStaging(settings.userDir)
    const modules = await discoverModules(settings.userDir, warn)
    const loader = createDiskLoader(modules)
    const { palette } = settings
    // npm, the palette's policy and their libraries are loaded at the first install or removal.
    const installer = onFirstUse(async () => {
      const [{ createNpmInstaller }, { createPalettePolicy }] = await Promise.all([
        import('../adapters/npm-installer.js'),
        import('../adapters/palette-policy.js'),
      ])
      return createNpmInstaller({
        userDir: settings.userDir,
        policy: createPalettePolicy(palette),
        registry: palette.registry,
        allowScripts: palette.allowScripts,
        timeoutMs: palette.timeout * 1000,
        waitMs: palette.wait * 1000,
        log,
        onChange: (installed) => loader.update(installed),
      })
    }, ['install', 'remove'])
    const core = await createServerCore({
      settings,
      stores,
      events,
      log,
      modules,
      verifier,
      loginQueue,
      observer: metrics?.observer,
      loader,
      installer,
    })
    resize = (bounds) => core.loginQueue.resize(bounds)
    const { fleet } = core
    let fleetRunning: RunningFleet | null = null
    if (fleet !== null) {
      const started = await startFleet(fleet, postgres, log)
      fleetRunning = started
      cleanup.push(() => started.close())
    }
    // In fleet mode the module store holds the fleet's desired modules, not this userDir's.
    if (fleet === null) await core.modules.sync(toDescriptors(modules))
    await core.sweep()
    // The groups' assignments count from the first request on.
    await core.groups.refresh()
    // Users removed from the settings since the last run lose every token now, not on next use.
    await core.tokens.purgeRemovedUsers()
    // Tokens saved before tokens had an audience get their client's, for good.
    await core.tokens.settleAudiences()
    // Tokens of signed-in people saved before names were bound claim their names, oldest first.
    await core.sso?.bindNamesOfTokens()
    metrics?.track({
      liveTokens: () => stores.tokens.countLive(Date.now()),
      loginQueueLoad: () => core.loginQueue.load(),
      fleet:
        fleet === null
          ? undefined
          : async () => {
              const instances = await fleet.instances()
              const connected = instances.filter((instance) => instance.connected).length
              return {
                connected,
                disconnected: instances.length - connected,
                drift: instances.reduce((sum, instance) => sum + instance.drift.length, 0),
                settingsAgree: await fleet.settingsAgree(),
              }
            },
    })
    let closing: Promise<void> | null = null
    const readiness = createReadiness(stores.tokens, () => (closing !== null ? 'closing' : 'running'))
    // Node sets another instance enables are loaded here too; a (re)connection checks them all.
    // A failed first connection is reported and retried by the watch itself.
    await postgres
      ?.watchModules((module) => core.modules.loadEnabled(module), { onError: warn })
      .ready.catch(() => {})
    // Token lookups answer from memory while every instance's token changes are heard.
    await postgres?.cacheTokens({ onError: warn }).ready.catch(() => {})
    const outage = createOutageLog(log)

    const proxies = parseTrustedProxies(settings.trustProxy)
    const app = createHttpApp(core, {
      version: VERSION,
      basePath: settings.httpAdminRoot,
      ssoRedirectUri: settings.adminAuth?.oidc?.redirectUri,
      // The console serves the sign-in page's passkey script beside itself.
      signInScript: settings.console ? `${settings.httpAdminRoot}/${SIGN_IN_SCRIPT}` : undefined,
      clientAddress: (c) => clientAddressOf(socketAddress(c), c.req.header('X-Forwarded-For'), proxies),
      maxBodyBytes: settings.apiMaxLength,
      cors: settings.httpAdminCors ?? undefined,
      // What the request sent stays in fields of its own: a path may hold any character.
      onUnexpectedError: (error, c) =>
        logger.error(
          { method: c.req.method, path: c.req.path, err: error },
          'unexpected error answering a request',
        ),
      readiness,
      fleet: fleetRunning?.signals,
      metrics: settings.metrics === 'api' ? metrics?.exposition : undefined,
      onResponse: metrics?.onResponse,
      onStorageUnavailable: (error) => outage(error),
    })
    const api = app.fetch
    const page = settings.console ? createConsole({ basePath: settings.httpAdminRoot }, api) : null
    if (settings.console && page === null) {
      warn(
        'the console is not built (run `pnpm build`), so only the API answers; "console": false silences this',
      )
    }
    // API requests go straight to the API; only the console's own paths pass its router.
    const consolePath = consolePaths(settings.httpAdminRoot)
    const serve: typeof app.fetch =
      page === null
        ? api
        : (request, env) => (consolePath(getPath(request)) ? page.fetch(request, env) : api(request, env))
    const listener = await listen(serve, settings.uiHost, settings.uiPort, settings.httpServer)
    cleanup.push(() => listener.close(0))
    let metricsServer: Listener | null = null
    if (metricsListener !== null && metrics !== null) {
      metricsServer = await listen(
        metricsFetch(metrics),
        metricsListener.host,
        metricsListener.port,
        settings.httpServer,
      )
      cleanup.push(() => metricsServer?.close(0))
    }

    const stopSweeper = startSweeper(() => core.sweep(), log)
    const stopTrailSweeper = startSweeper(() => core.trail.sweep(Date.now()), log, {
      what: 'the audit trail',
    })
    // Another flowadmin sharing the store may change the groups' assignments: read them again.
    const stopGroupRefresh = startSweeper(() => core.groups.refresh(), log, {
      everyMs: GROUP_REFRESH_MS,
      what: 'the groups of instances (reading their assignments)',
    })

    if (!core.authEnabled) {
      warn('adminAuth is not set: the admin API is open to anyone who can reach it')
    }
    for (const line of [...hashWarnings(settings), ...ldapWarnings(settings.adminAuth?.ldap)]) warn(line)
    let reloading: Promise<unknown> = Promise.resolve()
    const running: RunningServer = {
      url: `${originOf(listener)}${settings.httpAdminRoot}`,
      host: listener.address.address,
      port: listener.address.port,
      storage,
      authEnabled: core.authEnabled,
      settings,
      loginQueue,
      core,
      metricsUrl: metricsServer === null ? null : `${originOf(metricsServer)}/metrics`,
      reload() {
        // Each reload waits for the one before; none rejects, so none holds up those after it.
        const outcome = reloading.then(() => {
          reopenAuditLog(audit, log)
          return reloadSettings(running, options, cwd, log).catch((error: unknown) =>
            refuseReload(log, messageOf(error)),
          )
        })
        reloading = outcome
        return outcome
      },
      close() {
        closing ??= (async () => {
          stopSweeper()
          stopTrailSweeper()
          stopGroupRefresh()
          // Held polls answer now, so that the instances do not hold up the stop.
          fleetRunning?.signals.close()
          const grace = options.shutdownGraceMs ?? settings.shutdownTimeout
          await Promise.all([listener.close(grace), metricsServer?.close(0)])
          await undo()
        })()
        return closing
      },
    }
    return running
  } catch (error) {
    await undo()
    throw error
  }
}
