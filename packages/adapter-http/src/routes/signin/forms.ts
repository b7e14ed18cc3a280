import type { FactorError, LoginError } from '@flowadmin/core'
import { type Context, Hono } from 'hono'
import * as v from 'valibot'
import type { AppEnv } from '../../env.js'
import { codePage } from '../../sign-in-page/code-page.js'
import { enrolPage, recoveryPage } from '../../sign-in-page/enrol-page.js'
import { describeUserAgent } from '../../user-agent.js'
import { formStep } from './docs.js'
import type { SignInFlow } from './flow.js'

/** The client a console's sign-in is checked for (the console trades its code as this client). */
const CONSOLE_CLIENT = 'service-editor'

const text = (max: number, name: string) =>
  v.pipe(
    v.string(`${name} must be text`),
    v.nonEmpty(`${name} is required`),
    v.maxLength(max, `${name} is too long`),
  )
const PasswordForm = v.object({ username: text(256, 'Username'), password: text(1024, 'Password') })
const CodeForm = v.object({ ticket: text(64, 'The sign-in'), code: text(64, 'The code') })
const TicketForm = v.object({ ticket: text(64, 'The sign-in') })

/** What the person sees of a refused step: a status and a sentence. */
const PASSWORD_REFUSAL: Record<
  LoginError['code'] | FactorError['code'],
  (error: LoginError | FactorError) => [400 | 401 | 429 | 503, string]
> = {
  invalid_credentials: () => [401, 'Wrong username or password.'],
  invalid_request: () => [400, 'Type your username and password.'],
  unsupported_grant_type: () => [400, 'Type your username and password.'],
  invalid_scope: () => [400, 'Type your username and password.'],
  mfa_required: () => [400, 'You must sign in with a second factor.'],
  throttled: (error) => [429, `Too many failed attempts. Try again in ${waitOf(error)}.`],
  temporarily_unavailable: (error) => [503, `The server is busy; retry in ${retryOf(error)} s.`],
  directory_unavailable: (error) => [
    503,
    `The directory does not answer right now, so its people cannot sign in; retry in ${retryOf(error)} s.`,
  ],
  mfa_not_configured: () => [
    503,
    'You must set up a second factor, but flowadmin has no key for them yet: ask an administrator.',
  ],
  factor_exists: () => [400, 'A second factor was set up meanwhile: sign in again.'],
  enrolment_not_found: () => [400, 'The set-up was replaced meanwhile: sign in again.'],
  invalid_code: () => [401, 'That code is wrong, expired or used already.'],
}

/** Seconds the refusal says to wait, at least 1. */
const retryOf = (error: LoginError | FactorError): number => ('retryAfter' in error ? error.retryAfter : 1)
/** How long to wait, and until when (UTC: the server does not know the reader's zone). */
const waitOf = (error: LoginError | FactorError): string => {
  const seconds = retryOf(error)
  const until = new Date(Date.now() + seconds * 1000).toISOString().slice(11, 16)
  return `${seconds} seconds (at ${until} UTC)`
}

/**
 * A refused code: wrong (401), or too many attempts (429), as the person is told: the wait they
 * are told is the real one, as at the password step.
 */
const codeRefusal = (error: FactorError): [401 | 429, string] =>
  error.code === 'throttled' || error.code === 'temporarily_unavailable'
    ? [429, PASSWORD_REFUSAL[error.code](error)[1]]
    : [401, 'That code is wrong, expired or used already.']

const retryHeaders = (error: LoginError | FactorError) =>
  'retryAfter' in error ? { 'Retry-After': String(error.retryAfter) } : undefined

/** The page's form steps: the password, the second factor, an enrolment, after the recovery codes. */
export function signInFormRoutes(flow: SignInFlow): Hono<AppEnv> {
  const routes = new Hono<AppEnv>()
  const { core, deps, site, fieldsOf, expired, complete, passwordStep } = flow

  /**
   * A step that takes a code of the page's form (`take`: the second factor, or an enrolment's first
   * code): its outcome, with the form's destination and the browser's binding; null when there is
   * no sign-in to go on with (not a form of this page, or none under way for this ticket).
   */
  const codeStep = async <S extends { step: string }>(
    c: Context,
    take: (binding: string, ticket: string, code: string, address: string) => Promise<S>,
  ) => {
    const form = await fieldsOf(c, CodeForm)
    if (form === null) return null
    const { fields, destination, binding } = form
    const step = await take(binding, fields.ticket, fields.code, deps.clientAddress(c))
    if (step.step === 'expired') return null
    return { step: step as Exclude<S, { step: 'expired' }>, destination, binding }
  }

  routes.post(
    '/auth/signin',
    formStep(
      'signInPassword',
      'Sign in: the password',
      'Checks the username and password as the password grant does (throttled alike).',
      [200, 303, 400, 401, 403, 429, 503],
      { username: 'admin', password: 'flowadmin-demo' },
    ),
    async (c) => {
      const form = await fieldsOf(c, PasswordForm)
      if (form === null) return expired()
      const { fields, destination, binding } = form
      const agent = describeUserAgent(c.req.header('user-agent'))
      const step = await core.signIn.password(
        { ...fields, clientId: destination.authorization?.clientId ?? CONSOLE_CLIENT },
        binding,
        deps.clientAddress(c),
        agent,
      )
      if (!step.ok) {
        const [status, message] = PASSWORD_REFUSAL[step.error.code](step.error)
        return passwordStep(status, destination, message, fields.username, retryHeaders(step.error))
      }
      const next = step.value
      if (next.step === 'verified') return complete(c, next.person, destination, binding)
      if (next.step === 'enrol')
        return enrolPage(site, {
          status: 200,
          destination,
          ticket: next.ticket,
          enrolment: next.enrolment,
          error: null,
        })
      return codePage(site, {
        status: 200,
        destination,
        ticket: next.ticket,
        error: null,
        offer: { totp: next.totp, passkey: next.passkey && site.passkeyScript !== undefined },
      })
    },
  )

  routes.post(
    '/auth/signin/code',
    formStep(
      'signInCode',
      'Sign in: the second factor',
      'Checks a code of the person’s authenticator app, or one of their recovery codes (used up), each accepted once; throttled per person.',
      [303, 400, 401, 403, 429, 503],
      { ticket: 'the-ticket-of-the-page', code: '123456' },
    ),
    async (c) => {
      const taken = await codeStep(c, core.signIn.secondFactor)
      if (taken === null) return expired()
      const { step, destination, binding } = taken
      if (step.step === 'retry') {
        const [status, message] = codeRefusal(step.error)
        return codePage(site, {
          status,
          destination,
          ticket: step.ticket,
          error: message,
          offer: { totp: true, passkey: false },
          headers: retryHeaders(step.error),
        })
      }
      return complete(c, step.person, destination, binding)
    },
  )

  routes.post(
    '/auth/signin/enrol',
    formStep(
      'signInEnrol',
      'Sign in: set up a second factor',
      'Confirms the new authenticator app with its first code; the next page shows the recovery codes once. A refused code shows a new secret to scan.',
      [200, 400, 401, 403, 429],
      { ticket: 'the-ticket-of-the-page', code: '123456' },
    ),
    async (c) => {
      const taken = await codeStep(c, core.signIn.enrol)
      if (taken === null) return expired()
      const { step, destination } = taken
      if (step.step === 'retry') {
        const [status, refusal] = codeRefusal(step.error)
        const message =
          status === 401
            ? 'That code was not right. Scan this new code (it replaces the one before) and try again.'
            : `${refusal} Scan this new code (it replaces the one before) first.`
        return enrolPage(site, {
          status,
          destination,
          ticket: step.ticket,
          enrolment: step.enrolment,
          error: message,
          headers: retryHeaders(step.error),
        })
      }
      return recoveryPage(site, destination, step.ticket, step.recoveryCodes)
    },
  )

  routes.post(
    '/auth/signin/continue',
    formStep(
      'signInContinue',
      'Sign in: after the recovery codes',
      'Ends a sign-in whose enrolment showed the recovery codes.',
      [303, 400, 403, 503],
      { ticket: 'the-ticket-of-the-page' },
    ),
    async (c) => {
      const form = await fieldsOf(c, TicketForm)
      if (form === null) return expired()
      const { fields, destination, binding } = form
      const step = await core.signIn.finishEnrolment(binding, fields.ticket, deps.clientAddress(c))
      return step.step === 'verified' ? complete(c, step.person, destination, binding) : expired()
    },
  )

  return routes
}
