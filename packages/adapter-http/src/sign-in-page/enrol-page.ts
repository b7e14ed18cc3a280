import type { TotpEnrolment } from '@flowadmin/core'
import type { Destination } from '../sign-in-destination.js'
import { html } from './html.js'
import { signInPage } from './layout.js'
import { actionOf, formStart, forWhom, type SignInSite, ticketFields } from './parts.js'

// The enrolment a policy asks for during a sign-in: the new secret, then the recovery codes.

export interface EnrolPageOptions {
  status: number
  destination: Destination
  ticket: string
  enrolment: TotpEnrolment
  /** Why the code before was refused; null: none was sent yet. */
  error: string | null
  headers?: Record<string, string> | undefined
}

/** The new secret as a QR code and as text, and a form for its first code. */
export const enrolPage = (site: SignInSite, page: EnrolPageOptions): Response =>
  signInPage({
    status: page.status,
    headers: page.headers,
    title: 'Set up a second factor',
    body: html`${forWhom(page.destination)}<p>An administrator requires a second factor for your account. Scan this code with an authenticator app, or type the secret into it, then enter the six-digit code it shows.</p>
<img class="qr" src="${`data:image/svg+xml;base64,${btoa(page.enrolment.qrSvg)}`}" alt="QR code of your new secret for an authenticator app">
<p>Secret: <code class="secret" id="secret">${page.enrolment.secret}</code></p>
${formStart(actionOf(site, '/enrol'), page.error)}
${ticketFields(page.ticket, page.destination)}
<label for="code">Code from your authenticator app</label>
<input id="code" name="code" autocomplete="one-time-code" inputmode="numeric" required autofocus>
<button type="submit">Confirm</button>
</form>`,
  })

/** After an enrolment: the recovery codes, shown this once. */
export const recoveryPage = (
  site: SignInSite,
  destination: Destination,
  ticket: string,
  codes: string[],
): Response =>
  signInPage({
    status: 200,
    title: 'Save your recovery codes',
    body: html`<p>Each of these codes signs you in once instead of a code of your app, should you lose it. Keep them somewhere safe: they are not shown again.</p>
<ol class="codes" id="recovery-codes">${codes.map((code) => html`<li><code>${code}</code></li>`)}</ol>
<form method="post" action="${actionOf(site, '/continue')}">
${ticketFields(ticket, destination)}
<button type="submit">I saved them, continue</button>
</form>`,
  })
