import { useCallback, useEffect, useState } from 'hono/jsx/dom'
import { Activity } from './activity.js'
import {
  ApiError,
  canReadAudit,
  credentialPrompts,
  exchangeSignInCode,
  isAdmin,
  loginScheme,
  logOut,
  type Offers,
  offers,
  type Prompt,
  SessionEnded,
  type SignInButton,
  signInButton,
  takeSignInCode,
  token,
  type User,
  whoAmI,
} from './api.js'
import { Fleet } from './fleet.js'
import { LoginForm } from './login.js'
import { Modules } from './modules.js'
import { ResourceServers } from './resource-servers.js'
import { Security } from './security.js'
import { Sessions } from './sessions.js'

/** The page's icon, whose hashed name the page links. */
const ICON = document.querySelector<HTMLLinkElement>('link[rel="icon"]')?.href ?? ''

type Screen =
  | { name: 'loading' }
  | { name: 'unreachable'; message: string }
  | { name: 'login'; prompts: Prompt[]; button: SignInButton | null; notice: string | null }
  | { name: 'ready'; user: User; version: string; auth: boolean; offers: Offers }

export function App() {
  const [screen, setScreen] = useState<Screen>({ name: 'loading' })
  const [view, setView] = useState<'modules' | 'sessions' | 'security' | 'servers' | 'activity' | 'fleet'>(
    'modules',
  )

  /** Decides the screen from the server: its login scheme, then who this tab's token is. */
  const start = useCallback(async (given: string | null) => {
    try {
      let notice = given
      // Back from the identity provider: the one-time code becomes this tab's token.
      const code = takeSignInCode()
      if (code !== null) {
        const exchanged = await exchangeSignInCode(code)
        if (!exchanged.ok) notice = exchanged.message
      }
      const scheme = await loginScheme()
      const prompts = credentialPrompts(scheme)
      const button = signInButton(scheme)
      const auth = scheme.type !== undefined
      setView('modules')
      if (auth && token.get() === null) {
        setScreen({ name: 'login', prompts, button, notice })
        return
      }
      try {
        const [{ user, version }, offered] = await Promise.all([whoAmI(), offers()])
        setScreen({ name: 'ready', user, version, auth, offers: offered })
      } catch (error) {
        if (error instanceof SessionEnded)
          setScreen({ name: 'login', prompts, button, notice: error.message })
        else throw error
      }
    } catch (error) {
      setScreen({ name: 'unreachable', message: error instanceof ApiError ? error.message : String(error) })
    }
  }, [])

  useEffect(() => {
    void start(null)
  }, [])

  /** Any call that finds the token gone leads here: back to the login form, saying why. */
  const ended = useCallback((message: string) => void start(message), [])
  const leave = useCallback(async () => {
    await logOut()
    await start('You are logged out.')
  }, [])

  // Sessions and tokens belong to a logged-in user, on a server that offers them.
  const tokens =
    screen.name === 'ready' && screen.auth && screen.offers.tokens && screen.user.username !== undefined
  // Second factors belong to a person who signed in, on a server that offers them.
  const security =
    screen.name === 'ready' && screen.auth && screen.offers.mfa && screen.user.username !== undefined
  // The resource servers are the instance's, for whoever holds `*`, on a server that lists them.
  const servers = screen.name === 'ready' && screen.offers.resourceServers && isAdmin(screen.user.permissions)
  // The trail, for whoever may read it (`audit.read`), on a server that has one.
  const activity = screen.name === 'ready' && screen.offers.audit && canReadAudit(screen.user.permissions)
  // Fleet mode's instances, for whoever may read the node modules they apply.
  const fleet = screen.name === 'ready' && screen.offers.fleet

  return (
    <div class="shell">
      <header class="bar">
        <h1 class="brand">
          <img class="logo" src={ICON} alt="" />
          flowadmin
        </h1>
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
        {screen.name === 'login' && (
          <LoginForm
            prompts={screen.prompts}
            button={screen.button}
            notice={screen.notice}
            onDone={() => void start(null)}
          />
        )}
        {screen.name === 'ready' && (tokens || security || servers || activity || fleet) && (
          <nav class="nav tabs" aria-label="Sections">
            <button
              type="button"
              class="button"
              aria-current={view === 'modules' ? 'page' : undefined}
              onClick={() => setView('modules')}
            >
              Node modules
            </button>
            {fleet && (
              <button
                type="button"
                class="button"
                aria-current={view === 'fleet' ? 'page' : undefined}
                onClick={() => setView('fleet')}
              >
                Fleet
              </button>
            )}
            {tokens && (
              <button
                type="button"
                class="button"
                aria-current={view === 'sessions' ? 'page' : undefined}
                onClick={() => setView('sessions')}
              >
                Sessions and tokens
              </button>
            )}
            {security && (
              <button
                type="button"
                class="button"
                aria-current={view === 'security' ? 'page' : undefined}
                onClick={() => setView('security')}
              >
                Security
              </button>
            )}
            {servers && (
              <button
                type="button"
                class="button"
                aria-current={view === 'servers' ? 'page' : undefined}
                onClick={() => setView('servers')}
              >
                Resource servers
              </button>
            )}
            {activity && (
              <button
                type="button"
                class="button"
                aria-current={view === 'activity' ? 'page' : undefined}
                onClick={() => setView('activity')}
              >
                Activity
              </button>
            )}
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
        {screen.name === 'ready' && view === 'fleet' && <Fleet onSessionEnded={ended} />}
      </main>
      {screen.name === 'ready' && <footer class="foot muted">flowadmin {screen.version}</footer>}
    </div>
  )
}
