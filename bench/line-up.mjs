// The targets of a run: flowadmin (and flowadmin on SQLite beside it on a PostgreSQL run),
// Node-RED with --peer node-red, Node-RED with its own tokens and with flowadmin's through the
// helper for the scenarios that name them, and the baselines for the scenarios that have them.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { ARGON2_OPTIONS, argon2, RESOURCE_SERVER } from './flowadmin.mjs'
import { bcryptHash, installNodeRed } from './node-red.mjs'
import { login, recordRoutes } from './scenarios.mjs'
import {
  createBaselineTarget,
  createFlowadminTarget,
  createNodeRedHelperTarget,
  createNodeRedTarget,
} from './targets.mjs'

/**
 * The targets `scenarios` run against (`peer`: --peer), their servers' folders under `work`;
 * `redJs`, Node-RED's entry when it is installed; the bench's resource server ({id, secret, hash})
 * when a scenario needs one; and `targetsOf(scenario)`.
 */
export async function createLineUp(
  scenarios,
  peer,
  { postgres, work, serverRoot, serverEnv, credentials, cpuProfDir, log },
) {
  const named = new Set(scenarios.flatMap((s) => s.targets ?? []))
  // The resource server's secret as flowadmin's settings hold it: `flowadmin hash-pw`'s hash.
  const resourceServer =
    scenarios.some((s) => s.resourceServers) || named.has('nr-fa-cache0') || named.has('nr-fa-cache1000')
      ? {
          ...RESOURCE_SERVER,
          hash: await (await import('@flowadmin/server')).hashPassword(RESOURCE_SERVER.secret),
        }
      : null
  const flowadmin = createFlowadminTarget({
    postgres,
    root: work,
    serverRoot,
    serverEnv,
    username: credentials.username,
    passwordHash: await argon2.hash(credentials.password, ARGON2_OPTIONS),
    cpuProfDir,
  })
  const targets = [flowadmin]
  if (named.has('flowadmin-full')) {
    // flowadmin with every optional feature configured, on the run's store, in the scenarios that name it.
    targets.push(
      createFlowadminTarget({
        name: 'flowadmin-full',
        namedOnly: true,
        features: 'full',
        postgres,
        root: work,
        serverRoot,
        serverEnv,
        username: credentials.username,
        passwordHash: await argon2.hash(credentials.password, ARGON2_OPTIONS),
        cpuProfDir,
      }),
    )
  }
  if (postgres) {
    // flowadmin on SQLite beside, in the scenarios that compare the stores (besideSqlite, or named).
    targets.push(
      createFlowadminTarget({
        name: 'flowadmin-sqlite',
        namedOnly: true,
        root: work,
        serverRoot,
        serverEnv,
        username: credentials.username,
        passwordHash: await argon2.hash(credentials.password, ARGON2_OPTIONS),
        cpuProfDir: null,
      }),
    )
  }
  const nodeRedNamed = ['nr-own', 'nr-fa-cache0', 'nr-fa-cache1000'].some((name) => named.has(name))
  const redJs = peer === 'node-red' || nodeRedNamed ? await installNodeRed(log) : null
  const nodeRedHash = redJs ? bcryptHash(credentials.password, redJs) : null
  if (peer === 'node-red') {
    targets.push(
      createNodeRedTarget({ root: work, username: credentials.username, passwordHash: nodeRedHash, redJs }),
    )
  }
  if (nodeRedNamed) {
    // Node-RED with its own tokens, and with flowadmin's through @flowadmin/node-red: for the
    // scenarios that name them, whatever --peer says.
    targets.push(
      createNodeRedTarget({
        name: 'nr-own',
        namedOnly: true,
        root: work,
        username: credentials.username,
        passwordHash: nodeRedHash,
        redJs,
      }),
    )
    for (const cacheMs of [0, 1000]) {
      targets.push(
        createNodeRedHelperTarget({
          name: `nr-fa-cache${cacheMs}`,
          root: work,
          serverRoot,
          redJs,
          flowadmin,
          resourceServer,
          cacheMs,
        }),
      )
    }
  }
  if (scenarios.some((s) => s.baselines))
    targets.push(...(await createBaselines(flowadmin, work, credentials)))

  /** The targets a scenario runs against: those it names, or all but those run only when named. */
  const targetsOf = (scenario) =>
    scenario.targets
      ? targets.filter((target) => scenario.targets.includes(target.name))
      : targets.filter(
          (target) => !target.namedOnly || (scenario.besideSqlite && target.name === 'flowadmin-sqlite'),
        )
  return { targets, redJs, resourceServer, targetsOf }
}

/** The baselines, which answer flowadmin's own bodies and headers, recorded from it in this run. */
async function createBaselines(flowadmin, work, credentials) {
  const routesFile = join(work, 'routes.json')
  const instance = await flowadmin.start()
  try {
    const token = await login({ instance, target: flowadmin, credentials })
    writeFileSync(routesFile, JSON.stringify(await recordRoutes(instance, token)))
  } finally {
    await instance.stop()
  }
  return ['hono', 'node-http'].map((kind) => createBaselineTarget({ kind, root: work, routesFile }))
}
