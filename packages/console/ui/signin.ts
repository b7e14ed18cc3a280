// The script of flowadmin's sign-in page (served at `<base>/signin.js`, the page's CSP allows no
// inline script): its passkey buttons, `#passkey-signin` and `#passkey-second`, rendered hidden and
// shown when the browser can use passkeys. `<base>` is the button's `data-base`, where the sign-in
// ends its `data-destination` (the page's hidden fields, as JSON); a failure is written to
// `#passkey-error`. No HTML is ever written (the page may require Trusted Types).
import { browserSupportsWebAuthn, startAuthentication } from '@simplewebauthn/browser'

/** What the person reads when the server's answer has no message of its own. */
const FALLBACK = 'The passkey sign-in failed. Try again, or sign in with your password.'

/** An answer's `message`, or null. */
async function messageOf(response: Response): Promise<string | null> {
  try {
    const body: unknown = await response.json()
    if (typeof body === 'object' && body !== null) {
      const { message, error_description: description } = body as Record<string, unknown>
      if (typeof message === 'string' && message !== '') return message
      if (typeof description === 'string' && description !== '') return description
    }
  } catch {
    // Not JSON: the fallback below says enough.
  }
  return null
}

/** POSTs `body` as JSON; the answer's JSON object, or an Error carrying the server's message. */
async function post(url: string, body: unknown): Promise<Record<string, unknown>> {
  let response: Response
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
    })
  } catch {
    throw new Error('The server cannot be reached. Check your connection, then try again.')
  }
  if (!response.ok) throw new Error((await messageOf(response.clone())) ?? FALLBACK)
  const parsed: unknown = await response.json().catch(() => null)
  if (typeof parsed !== 'object' || parsed === null) throw new Error(FALLBACK)
  return parsed as Record<string, unknown>
}

/** What the browser's refusal means to the person. */
function refusal(error: unknown): Error {
  const name = error instanceof Error ? error.name : ''
  if (name === 'NotAllowedError' || name === 'AbortError')
    return new Error('The passkey sign-in was cancelled or timed out.')
  return new Error(
    `The browser could not use a passkey: ${error instanceof Error ? error.message : FALLBACK}`,
  )
}

function show(message: string): void {
  const target = document.getElementById('passkey-error')
  if (target === null) return
  target.textContent = message
  target.hidden = message === ''
}

/** One sign-in with a passkey, from the button; ends by leaving the page or saying why not. */
async function signIn(button: HTMLButtonElement): Promise<void> {
  const base = (button.dataset.base ?? '').replace(/\/+$/, '')
  button.disabled = true
  show('')
  try {
    const { options } = await post(`${base}/auth/signin/passkey/options`, {})
    if (typeof options !== 'object' || options === null) throw new Error(FALLBACK)
    const response = await startAuthentication({
      optionsJSON: options as Parameters<typeof startAuthentication>[0]['optionsJSON'],
    }).catch((error: unknown) => {
      throw refusal(error)
    })
    // Where the sign-in ends, as the page carries it (flowadmin checks it again).
    const destination = JSON.parse(button.dataset.destination ?? '{}') as Record<string, string>
    const { redirect } = await post(`${base}/auth/signin/passkey`, { response, destination })
    if (typeof redirect !== 'string' || redirect === '') throw new Error(FALLBACK)
    location.assign(redirect)
  } catch (error) {
    show(error instanceof Error ? error.message : FALLBACK)
    button.disabled = false
  }
}

if (browserSupportsWebAuthn()) {
  for (const id of ['passkey-signin', 'passkey-second']) {
    const button = document.getElementById(id)
    if (!(button instanceof HTMLButtonElement)) continue
    button.hidden = false
    button.addEventListener('click', (event) => {
      // Not the form's submit, when the page puts the button in one.
      event.preventDefault()
      void signIn(button)
    })
  }
}
