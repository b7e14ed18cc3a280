import type { Destination } from '../sign-in-destination.js'
import { html } from './html.js'
import { signInPage } from './layout.js'
import { actionOf, formStart, forWhom, hidden, passkeyButton, type SignInSite } from './parts.js'

/** What the console may ask the page to say above the form (`notice`), by name. */
export const NOTICES = {
  logged_out: 'You are logged out.',
  session_ended: 'Your session has ended (it expired or was revoked). Please log in again.',
  ended_here: 'You ended this session.',
  signed_out_everywhere: 'Signed out everywhere: every session and API token of yours has ended.',
  sign_in_failed: 'The sign-in did not complete. Please sign in again.',
} as const
export type Notice = keyof typeof NOTICES
export const noticeOf = (value: string | undefined): Notice | null =>
  value !== undefined && Object.hasOwn(NOTICES, value) ? (value as Notice) : null

export interface PasswordPageOptions {
  status: number
  destination: Destination
  /** Why the step before was refused; null: nothing was sent yet. */
  error: string | null
  /** The username typed before. */
  username: string
  headers?: Record<string, string> | undefined
  notice: Notice | null
  /** Whether flowadmin has users of its own: without them the page shows the provider's button alone. */
  hasUsers: boolean
  /** The identity provider's button label, when single sign-on is configured. */
  provider: string | null
}

/** The first step's page: the password form, the provider's button beside it when there is one. */
export const passwordPage = (site: SignInSite, page: PasswordPageOptions): Response => {
  const { destination, error, notice, hasUsers, provider } = page
  return signInPage({
    status: page.status,
    title: 'Log in',
    headers: page.headers,
    script: site.passkeyScript,
    body: html`${forWhom(destination)}${notice === null ? '' : html`<p class="notice" role="status">${NOTICES[notice]}</p>`}
${
  hasUsers
    ? html`${formStart(actionOf(site, ''), error)}
<label for="username">Username</label>
<input id="username" name="username" type="text" autocomplete="username" autocapitalize="none" spellcheck="false" required autofocus value="${page.username}">
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
${hidden(destination)}
<button type="submit">Log in</button>
</form>
${site.passkeyScript === undefined ? '' : passkeyButton(site, 'passkey-signin', 'Sign in with a passkey', destination)}`
    : ''
}
${
  provider === null
    ? ''
    : html`${hasUsers ? html`<p class="or">or</p>` : ''}
<form method="post" action="${actionOf(site, '/provider')}">${hidden(destination)}<button type="submit" class="${hasUsers ? 'secondary' : ''}">${provider}</button></form>`
}`,
  })
}
