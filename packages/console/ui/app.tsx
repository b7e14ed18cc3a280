import { useCallback, useEffect, useState } from 'hono/jsx/dom'
import { Access } from './access.js'
import { Activity } from './activity.js'
import {
  ApiError,
  canRead,
  canReadAudit,
  canReadFlows,
  canReadNodes,
  exchangeSignInCode,
  isAdmin,
  loginScheme,
  logOut,
  type Notice,
  type Offers,
  offers,
  SessionEnded,
  signInPage,
  takeSignInCode,
  token,
  type User,
  whoAmI,
} from './api.js'
import { ownAccess } from './api-access.js'
import { Fleet } from './fleet.js'
import { Flows } from './flows.js'
import { Groups } from './groups.js'
import { Modules } from './modules.js'
import { ResourceServers } from './resource-servers.js'
import { Security } from './security.js'
import { Sessions } from './sessions.js'

type Screen =
  | { name: 'loading' }
  | { name: 'unreachable'; message: string }
  | { name: 'signing-in' }
  | {
      name: 'ready'
      user: User
      version: string | null
      auth: boolean
      offers: Offers
      /** What this session may do on each scope (its own access); null: no login, or not told. */
      scopes: Record<string, string[]> | null
    }

type View =
  | 'modules'
  | 'fleet'
  | 'groups'
  | 'flows'
  | 'sessions'
  | 'security'
  | 'access'
  | 'servers'
  | 'activity'

/** The views' tabs, in their order. */
const TABS: ReadonlyArray<[View, string]> = [
  ['modules', 'Node modules'],
  ['fleet', 'Fleet'],
  ['groups', 'Groups'],
  ['flows', 'Flows'],
  ['sessions', 'Sessions and tokens'],
  ['security', 'Security'],
  ['access', 'Access'],
  ['servers', 'Resource servers'],
  ['activity', 'Activity'],
]

/** The views this person has on this server. */
function viewsOf(ready: Extract<Screen, { name: 'ready' }>): Record<View, boolean> {
  const { user, offers } = ready
  // Sessions, tokens and second factors belong to a person who signed in.
  const person = ready.auth && user.username !== undefined
  return {
    // flowadmin's node modules, for whoever may read them (everyone where no login is configured).
    modules: !ready.auth || canReadNodes(user.permissions),
    // Fleet mode's instances, for whoever may read the node modules they apply.
    fleet: offers.fleet,
    // The groups of instances (fleet mode with auth), for whoever may read flowadmin's own API.
    groups: offers.groups && canRead(user.permissions),
    // Snapshots and rollouts (fleet mode), for whoever may read flows somewhere: on flowadmin or a group.
    flows:
      offers.flows &&
      (!ready.auth ||
        canReadFlows(user.permissions) ||
        Object.values(ready.scopes ?? {}).some((permissions) => canReadFlows(permissions))),
    sessions: person && offers.tokens,
    security: person && offers.mfa,
    // Their own grants and rights; everyone's besides for whoever holds `*` on flowadmin.
    access: person && offers.access,
    // The resource servers are the instance's, for whoever holds `*`.
    servers: offers.resourceServers && isAdmin(user.permissions),
    // The trail, for whoever may read it (`audit.read`).
    activity: offers.audit && canReadAudit(user.permissions),
  }
}

/**
 * What a person's session may do on each scope, where the views need more than flowadmin's own
 * rights (the Flows view: a grant on a group reaches that group's flows); null where not needed.
 */
async function scopesOf(auth: boolean, offered: Offers): Promise<Record<string, string[]> | null> {
  if (!auth || !offered.access || !offered.flows) return null
  try {
    return (await ownAccess()).scopes
  } catch (error) {
    if (error instanceof SessionEnded) throw error
    return null
  }
}

export function App() {
  const [screen, setScreen] = useState<Screen>({ name: 'loading' })
  const [view, setView] = useState<View>('modules')

  /**
   * Decides the screen from the server: its login scheme, then who this tab's token is. Without a
   * token, people sign in on flowadmin's sign-in page, which sends them back here with a one-time
   * code; `notice` is what that page says first.
   */
  const start = useCallback(async (given: Notice | null) => {
    const toSignIn = (notice: Notice | null) => {
      setScreen({ name: 'signing-in' })
      location.assign(signInPage(notice))
    }
    try {
      let notice = given
      // Back from the sign-in: the one-time code becomes this tab's token.
      const code = takeSignInCode()
      if (code !== null && !(await exchangeSignInCode(code)).ok) notice = 'sign_in_failed'
      const scheme = await loginScheme()
      const auth = scheme.type !== undefined
      setView('modules')
      if (auth && token.get() === null) return toSignIn(notice)
      try {
        const [{ user, version }, offered] = await Promise.all([whoAmI(), offers()])
        const scopes = await scopesOf(auth, offered)
        const ready = { name: 'ready', user, version, auth, offers: offered, scopes } as const
        setScreen(ready)
        // The first view this person may open: the node modules, unless they may not read them.
        const views = viewsOf(ready)
        setView(TABS.find(([name]) => views[name])?.[0] ?? 'modules')
      } catch (error) {
        if (error instanceof SessionEnded) toSignIn('session_ended')
        else throw error
      }
    } catch (error) {
      setScreen({ name: 'unreachable', message: error instanceof ApiError ? error.message : String(error) })
    }
  }, [])

  useEffect(() => {
    void start(null)
  }, [])

  /** Any call that finds the token gone leads here: to the sign-in page, saying why. */
  const ended = useCallback((notice: Notice) => void start(notice), [])
  const leave = useCallback(async () => {
    await logOut()
    await start('logged_out')
  }, [])

  // A view is offered only where the server offers what it shows (a server tells in its OpenAPI document).
  const views = screen.name === 'ready' ? viewsOf(screen) : null
  const tabs = views === null ? [] : TABS.filter(([name]) => views[name])

  return (
    <div class="shell">
      <header class="bar">
        <h1 class="brand">flowadmin</h1>
        {screen.name === 'ready' && (
          <div class="who">
            <span class="user">
              {screen.user.username ?? 'anonymous'}
              {!screen.auth && <span class="tag">no login configured</span>}
            </span>
            {screen.auth && screen.user.username !== undefined && (
              <button type="button" class="button" onClick={() => void leave()}>
                Log out
              </button>
            )}
          </div>
        )}
      </header>
      <main id="main" class="content">
        {screen.name === 'loading' && (
          <p class="muted" role="status">
            Loading…
          </p>
        )}
        {screen.name === 'unreachable' && (
          <div class="panel">
            <p role="alert" class="error">
              {screen.message}
            </p>
            <button type="button" class="button" onClick={() => void start(null)}>
              Try again
            </button>
          </div>
        )}
        {screen.name === 'signing-in' && (
          <p class="muted" role="status">
            Going to the sign-in page…
          </p>
        )}
        {tabs.length > 1 && (
          <nav class="nav tabs" aria-label="Sections">
            {tabs.map(([name, label]) => (
              <button
                type="button"
                class="button"
                key={name}
                aria-current={view === name ? 'page' : undefined}
                onClick={() => setView(name)}
              >
                {label}
              </button>
            ))}
          </nav>
        )}
        {screen.name === 'ready' && view === 'modules' && (
          <Modules user={screen.user} offers={screen.offers} onSessionEnded={ended} />
        )}
        {screen.name === 'ready' && view === 'sessions' && (
          <Sessions user={screen.user} onSessionEnded={ended} />
        )}
        {screen.name === 'ready' && view === 'security' && (
          <Security user={screen.user} onSessionEnded={ended} />
        )}
        {screen.name === 'ready' && view === 'servers' && <ResourceServers onSessionEnded={ended} />}
        {screen.name === 'ready' && view === 'activity' && <Activity onSessionEnded={ended} />}
        {screen.name === 'ready' && view === 'fleet' && <Fleet user={screen.user} onSessionEnded={ended} />}
        {screen.name === 'ready' && view === 'groups' && <Groups user={screen.user} onSessionEnded={ended} />}
        {screen.name === 'ready' && view === 'flows' && (
          <Flows
            user={screen.user}
            scopes={screen.auth ? (screen.scopes ?? { flowadmin: screen.user.permissions }) : null}
            onSessionEnded={ended}
          />
        )}
        {screen.name === 'ready' && view === 'access' && <Access user={screen.user} onSessionEnded={ended} />}
      </main>
      {screen.name === 'ready' && screen.version !== null && (
        <footer class="foot muted">flowadmin {screen.version}</footer>
      )}
    </div>
  )
}
