import type { Destination } from '../sign-in-destination.js'
import { html } from './html.js'
import { signInPage } from './layout.js'
import { actionOf, formStart, forWhom, passkeyButton, type SignInSite, ticketFields } from './parts.js'

export interface CodePageOptions {
  status: number
  destination: Destination
  ticket: string
  /** Why the code before was refused; null: none was sent yet. */
  error: string | null
  /** The second factors offered: an authenticator app's code, a passkey. */
  offer: { totp: boolean; passkey: boolean }
  headers?: Record<string, string> | undefined
}

/** The second step: a code of the authenticator app, or a recovery code; or the person's passkey. */
export const codePage = (site: SignInSite, page: CodePageOptions): Response => {
  const { destination, error, offer } = page
  return signInPage({
    status: page.status,
    title: 'Second factor',
    headers: page.headers,
    script: offer.passkey ? site.passkeyScript : undefined,
    body: html`${forWhom(destination)}${
      offer.totp
        ? html`${formStart(actionOf(site, '/code'), error)}
${ticketFields(page.ticket, destination)}
<label for="code">Code from your authenticator app, or a recovery code</label>
<input id="code" name="code" autocomplete="one-time-code" autocapitalize="none" spellcheck="false" required autofocus>
<button type="submit">Verify</button>
</form>`
        : offer.passkey
          ? html`<p>Your password was right. Finish with your passkey.</p>`
          : html`<p>Your account signs in with a passkey, which this page cannot offer now. Ask an administrator.</p>`
    }
${offer.passkey ? passkeyButton(site, 'passkey-second', offer.totp ? 'Use a passkey instead' : 'Sign in with your passkey', destination) : ''}`,
  })
}
