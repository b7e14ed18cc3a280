import { browserSupportsWebAuthn, startRegistration } from '@simplewebauthn/browser'
import { useEffect, useState } from 'hono/jsx/dom'
import {
  ApiError,
  addPasskey,
  listPasskeys,
  type Notice,
  type Passkey,
  passkeyOptions,
  removePasskey,
} from './api.js'
import { Confirm } from './confirm.js'
import { Feedback, useFeedback } from './feedback.js'
import { when } from './time.js'

/** Why passkeys cannot be used here, or null when they can. */
type Unavailable = string | null

const NOT_OFFERED = 'Passkeys are not available on this server.'
const NOT_CONFIGURED =
  'Passkeys are not available on this server yet: an administrator must configure them (adminAuth.webauthn).'

/** What the browser's refusal means to the person. */
function browserRefusal(error: unknown): Error {
  const name = error instanceof Error ? error.name : ''
  if (name === 'NotAllowedError' || name === 'AbortError')
    return new Error('No passkey was created: the browser’s prompt was cancelled or timed out.')
  if (name === 'InvalidStateError') return new Error('This authenticator holds a passkey of yours already.')
  return new Error(
    `The browser could not create a passkey: ${error instanceof Error ? error.message : error}`,
  )
}

/** The person's passkeys: list, add (a name, then the browser's prompt), remove with a confirmation. */
export function Passkeys(props: { onSessionEnded: (notice: Notice) => void }) {
  const { alert, status, setStatus, guard } = useFeedback(props.onSessionEnded)
  const [passkeys, setPasskeys] = useState<Passkey[] | null>(null)
  const [unavailable, setUnavailable] = useState<Unavailable>(null)
  const [confirming, setConfirming] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)

  const refresh = async () => {
    const listed = await guard(async () => {
      try {
        return await listPasskeys()
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) return NOT_OFFERED
        if (error instanceof ApiError && error.code === 'passkeys_not_configured') return NOT_CONFIGURED
        throw error
      }
    })
    if (typeof listed === 'string') setUnavailable(listed)
    else if (listed !== undefined) setPasskeys(listed)
  }
  useEffect(() => {
    void refresh()
  }, [])

  const add = async (event: Event) => {
    event.preventDefault()
    if (busy) return
    const form = event.currentTarget as HTMLFormElement
    const name = String(new FormData(form).get('name') ?? '').trim()
    setBusy(true)
    const added = await guard(async () => {
      let options: Awaited<ReturnType<typeof passkeyOptions>>
      try {
        options = await passkeyOptions()
      } catch (error) {
        if (error instanceof ApiError && error.code === 'passkeys_not_configured')
          throw new Error(NOT_CONFIGURED)
        throw error
      }
      const response = await startRegistration({ optionsJSON: options }).catch((error: unknown) => {
        throw browserRefusal(error)
      })
      return addPasskey(name, response)
    })
    setBusy(false)
    if (added === undefined) return
    form.reset()
    setStatus(`Passkey ${added.name} added. Your other sessions have ended.`)
    await refresh()
  }

  const remove = async (passkey: Passkey) => {
    setConfirming(null)
    const done = await guard(async () => {
      await removePasskey(passkey.id)
      return true
    })
    if (done === undefined) return
    setStatus(`Passkey ${passkey.name} removed.`)
    await refresh()
  }

  const supported = browserSupportsWebAuthn()
  return (
    <section class="card security" aria-labelledby="passkeys-title">
      <h3 id="passkeys-title">Passkeys</h3>
      <Feedback alert={alert} status={status} />
      {unavailable !== null && <p class="muted">{unavailable}</p>}
      {unavailable === null && passkeys === null && alert === null && <p class="muted">Loading…</p>}
      {passkeys !== null && (
        <>
          <p class="muted hint">
            Sign in with your device's screen lock or a security key instead of a password and code. Adding or
            removing one ends your other sessions; this one stays.
          </p>
          {passkeys.length === 0 ? (
            <p>No passkey yet.</p>
          ) : (
            <ul class="cards" aria-label="Your passkeys">
              {passkeys.map((passkey) => (
                <li class="token passkey" key={passkey.id}>
                  <div class="token-main">
                    <div class="title">
                      <h4>{passkey.name}</h4>
                      {passkey.backed_up && <span class="tag">synced</span>}
                    </div>
                    <dl class="facts">
                      <dt>Added</dt>
                      <dd>{when(passkey.created_at, '')}</dd>
                      <dt>Last used</dt>
                      <dd>{when(passkey.last_used_at, 'not yet')}</dd>
                    </dl>
                    {confirming === passkey.id && (
                      <Confirm
                        question={`Remove the passkey ${passkey.name}? It will no longer sign you in.`}
                        onConfirm={() => void remove(passkey)}
                        onCancel={() => setConfirming(null)}
                      />
                    )}
                  </div>
                  <button
                    type="button"
                    class="button"
                    aria-label={`Remove ${passkey.name}`}
                    onClick={() => setConfirming(passkey.id)}
                  >
                    Remove
                  </button>
                </li>
              ))}
            </ul>
          )}
          {supported ? (
            <form class="install-fields" onSubmit={add} aria-label="Add a passkey">
              <div class="field grow">
                <label for="passkey-name">Passkey name</label>
                <input
                  id="passkey-name"
                  name="name"
                  type="text"
                  maxlength={64}
                  placeholder="e.g. work laptop"
                  autocomplete="off"
                  required
                />
              </div>
              <button type="submit" class="button primary" disabled={busy}>
                Add a passkey
              </button>
            </form>
          ) : (
            <p class="muted">This browser cannot create passkeys.</p>
          )}
        </>
      )}
    </section>
  )
}
