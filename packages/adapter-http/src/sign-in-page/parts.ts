import { type Destination, fieldsOfDestination } from '../sign-in-destination.js'
import { html } from './html.js'

// The pieces the sign-in page's steps share.

/** What every step of the sign-in page needs to know of this service. */
export interface SignInSite {
  /** The service's root: '' or a path without a trailing slash. */
  basePath: string
  /** The passkey script's address, when passkeys are configured and the script is served. */
  passkeyScript: string | undefined
}

/** Where a step's form is sent: `/auth/signin` and the step, below the service's root. */
export const actionOf = (site: SignInSite, step: string) => `${site.basePath}/auth/signin${step}`

/** The destination as the page's hidden fields, sent back with each form. */
export const hidden = (destination: Destination) =>
  Object.entries(fieldsOfDestination(destination)).map(
    ([name, value]) => html`<input type="hidden" name="${name}" value="${value}">`,
  )

/** The ticket of a sign-in under way and the destination, as hidden fields. */
export const ticketFields = (ticket: string, destination: Destination) =>
  html`<input type="hidden" name="ticket" value="${ticket}">${hidden(destination)}`

/** Who the sign-in is for, when a resource server asked for it. */
export const forWhom = (destination: Destination) =>
  destination.authorization === null
    ? ''
    : html`<p class="for">Signing in to <strong>${destination.authorization.clientId}</strong></p>`

/** A step's form, up to its fields: the refusal of the step before it, when there is one. */
export const formStart = (action: string, error: string | null) =>
  html`<form method="post" action="${action}" aria-labelledby="title"${error === null ? '' : html` aria-describedby="form-error"`}>
${error === null ? '' : html`<p class="error" role="alert" id="form-error">${error}</p>`}`

/** A passkey button, hidden until the script finds that the browser can use passkeys. */
export const passkeyButton = (site: SignInSite, id: string, label: string, destination: Destination) =>
  html`<button type="button" id="${id}" class="secondary" data-base="${site.basePath}" data-destination="${JSON.stringify(fieldsOfDestination(destination))}" hidden>${label}</button>
<p class="error" role="alert" id="passkey-error" hidden></p>`
