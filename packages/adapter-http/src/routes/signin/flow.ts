import { type Core, codeOwnerOf, type VerifiedPerson } from '@flowadmin/core'
import type { Context } from 'hono'
import * as v from 'valibot'
import { newBinding, pageBindingOf, setBinding } from '../../binding.js'
import { readBody } from '../../body.js'
import type { RouteDeps } from '../../env.js'
import { codeLocation, type Destination, destinationOf, redirect } from '../../sign-in-destination.js'
import { messagePage } from '../../sign-in-page/layout.js'
import type { SignInSite } from '../../sign-in-page/parts.js'
import { type Notice, passwordPage } from '../../sign-in-page/password-page.js'

// flowadmin's own sign-in page, for its own users: the console's login and a resource server's
// authorization request (`GET /auth/authorize`, a Node-RED editor's "Sign in with …") both show
// it, the browser bound by an HttpOnly cookie (a random value; nothing is stored before a right
// password), and the page carries where the sign-in ends (checked again at every step). It asks
// for the password, then the second factor the person has (a code, or a passkey alone), or an
// enrolment when the policy says they must have one. Between steps a ticket waits in the store,
// keyed by the cookie too, so it serves only this browser. The end is the same one-time code
// single sign-on hands out: in the console's URL fragment, or at the resource server's redirect
// URI. Every step is a form POST, refused from another site (its cookie is SameSite=Lax, and
// `Sec-Fetch-Site` must be same-origin when the browser sends it), so the page works without
// script; the only script is the passkey button's, served by flowadmin itself.

/** What a person is told of a sign-in that is not there (never begun here, used, or past its time). */
export const EXPIRED =
  'This sign-in was not started in this browser, was used already, or took too long. Start again.'

/** What the routes of the sign-in page share: the site, its first page, and how a sign-in ends. */
export type SignInFlow = ReturnType<typeof createSignInFlow>

/** The sign-in page's shared steps, over the core and the settings of these routes. */
export function createSignInFlow(deps: RouteDeps) {
  const { core, basePath } = deps
  const home = `${basePath}/`
  const site: SignInSite = {
    basePath,
    // The passkey script, when passkeys are configured and the script is served.
    passkeyScript: core.passkeys.available ? deps.signInScript : undefined,
  }
  const restart = { href: `${basePath}/auth/signin`, label: 'Start again' }
  const sso: Core['sso'] = core.sso

  /** The first step's page: the password form, the provider's button beside it when there is one. */
  const passwordStep = (
    status: number,
    destination: Destination,
    error: string | null,
    username = '',
    headers?: Record<string, string>,
    notice: Notice | null = null,
  ) =>
    passwordPage(site, {
      status,
      destination,
      error,
      username,
      headers,
      notice,
      hasUsers: core.signIn.hasUsers(),
      provider: sso === null ? null : sso.label,
    })

  /**
   * The sign-in is complete: the one-time code, for the console of this browser (in the URL's
   * fragment) or for the resource server (at its redirect URI). Where the browser goes next, or why
   * it cannot.
   */
  const handOver = async (
    c: Context,
    person: VerifiedPerson,
    destination: Destination,
    binding: string,
  ): Promise<{ ok: true; location: string } | { ok: false; message: string; scope: 'address' | 'all' }> => {
    const done = await core.signIn.handOver(
      codeOwnerOf(person),
      destination.authorization === null
        ? { binding, authorization: null }
        : { binding: null, authorization: destination.authorization },
      deps.clientAddress(c),
    )
    // Too many codes waiting, from this address or in all: either way, later.
    if (!done.ok)
      return {
        ok: false,
        message: 'Too many sign-ins are waiting to finish. Try again in a minute.',
        scope: done.error === 'address_full' ? 'address' : 'all',
      }
    return { ok: true, location: codeLocation(destination, done.value) }
  }

  /** The destination a form or the script sent back, checked again; null when it does not hold. */
  const destinationBack = (fields: Record<string, unknown>) =>
    destinationOf(fields, (clientId, redirectUri) => core.redirectRegistered(clientId, redirectUri), basePath)

  /**
   * A step's form as `schema` reads it, with its destination and the browser's binding; null when
   * the form is not what this page sends, or the browser began no sign-in here.
   */
  const fieldsOf = async <S extends v.GenericSchema>(
    c: Context,
    schema: S,
  ): Promise<{ fields: v.InferOutput<S>; destination: Destination; binding: string } | null> => {
    const binding = pageBindingOf(c)
    if (binding === null) return null
    const body = await readBody(c.req.raw, deps.maxBodyBytes, ['form'], c.env)
    if (!body.ok) return null
    const parsed = v.safeParse(schema, body.value)
    const destination = destinationBack(body.value)
    return parsed.success && destination !== null
      ? { fields: parsed.output as v.InferOutput<S>, destination, binding }
      : null
  }

  /** A form step that signed the person in: 303 to where the sign-in ends, or a page that says why not. */
  const complete = async (
    c: Context,
    person: VerifiedPerson,
    destination: Destination,
    binding: string,
  ): Promise<Response> => {
    const handed = await handOver(c, person, destination, binding)
    if (!handed.ok) return messagePage(503, 'Too many sign-ins', handed.message, restart)
    // A console's cookie stays: the console trades the code with it, and that removes it.
    return redirect(handed.location, 303)
  }

  /**
   * Shows the page's first step, the browser bound by a cookie (its value kept when it has one, so
   * a sign-in in another tab does not end this one); nothing is stored yet.
   */
  const begin = (c: Context, destination: Destination, notice: Notice | null = null): Response => {
    const binding = pageBindingOf(c) ?? newBinding()
    return passwordStep(200, destination, null, '', { 'Set-Cookie': setBinding(c, deps, binding) }, notice)
  }

  return {
    deps,
    core,
    home,
    site,
    restart,
    sso,
    passwordStep,
    handOver,
    destinationOf: destinationBack,
    fieldsOf,
    complete,
    begin,
    /** The page of a sign-in that is not there. */
    expired: () => messagePage(400, 'Sign-in expired', EXPIRED, restart),
  }
}
