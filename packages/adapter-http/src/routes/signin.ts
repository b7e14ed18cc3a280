import { Hono } from 'hono'
import * as v from 'valibot'
import { redirectUriOf } from '../binding.js'
import type { AppEnv, RouteDeps } from '../env.js'
import { noStoreJson } from '../no-store.js'
import { messagePage } from '../sign-in-page/layout.js'
import { ssoRefusal, toProvider } from '../sso-answers.js'
import { formStep } from './signin/docs.js'
import { createSignInFlow } from './signin/flow.js'
import { signInFormRoutes } from './signin/forms.js'
import { signInPasskeyRoutes } from './signin/passkey.js'
import { signInStartRoutes } from './signin/start.js'

// The page's forms and its script's calls come from the page itself: a browser that says where a
// request came from (`Sec-Fetch-Site`) must say this origin, so another site, even a sibling
// subdomain whose requests carry the SameSite cookie, cannot sign someone in as anybody.
const CROSS_SITE =
  'This sign-in was sent from another site, so it is refused. Open the sign-in page of this service and sign in there.'

/**
 * flowadmin's own sign-in page (see signin/flow.ts): where it begins, its form steps, the passkey
 * button's calls and the provider button. Only when auth is on.
 */
export function signInRoutes(deps: RouteDeps): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  const { core, basePath } = deps
  if (!core.authEnabled) return routes
  const flow = createSignInFlow(deps)
  const { home, sso, fieldsOf, expired } = flow

  for (const path of ['/auth/signin', '/auth/signin/*'])
    routes.use(path, async (c, next) => {
      const site = c.req.header('sec-fetch-site')
      if (c.req.method !== 'POST' || site === undefined || site === 'same-origin') return next()
      return c.req.path.startsWith(`${basePath}/auth/signin/passkey`)
        ? noStoreJson(403, { code: 'cross_site', message: CROSS_SITE })
        : messagePage(403, 'Sign-in refused', CROSS_SITE, flow.restart)
    })

  routes
    .route('/', signInStartRoutes(flow))
    .route('/', signInFormRoutes(flow))
    .route('/', signInPasskeyRoutes(flow))

  if (sso !== null)
    routes.post(
      '/auth/signin/provider',
      formStep(
        'signInWithProvider',
        'Sign in with the identity provider instead',
        'The page’s provider button: the sign-in goes on at the identity provider (303 there), for the console or the resource server the page carries.',
        [302, 303, 400, 403, 503],
        {},
      ),
      async (c) => {
        // A sign-in at the provider begins for the same destination as the page's.
        const form = await fieldsOf(c, v.object({}))
        if (form === null) return expired()
        const { destination } = form
        const started = await sso.begin(
          redirectUriOf(c, deps),
          destination.returnTo ?? home,
          deps.clientAddress(c),
          destination.authorization,
        )
        if (!started.ok) return ssoRefusal(started.error, home, destination.authorization ?? undefined)
        const answer = toProvider(c, deps, started.value)
        return new Response(null, { status: 303, headers: answer.headers })
      },
    )

  return routes
}
