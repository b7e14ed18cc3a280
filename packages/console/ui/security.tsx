import { useEffect, useState } from 'hono/jsx/dom'
import {
  ApiError,
  confirmTotp,
  type FactorStatus,
  factorStatus,
  isAdmin,
  listPeople,
  type Notice,
  removeFactors,
  startTotp,
  type TotpEnrolment,
  type User,
} from './api.js'
import { Confirm } from './confirm.js'
import { Feedback, useFeedback } from './feedback.js'
import { Passkeys } from './passkeys.js'

/** What to tell the person for the refusals they can act on; the server's own message otherwise. */
function explain(error: unknown): never {
  if (error instanceof ApiError) {
    if (error.code === 'mfa_not_configured')
      throw new Error(
        'Second factors are not available on this server yet: an administrator must set the key for their secrets (adminAuth.mfa.key or FLOWADMIN_MFA_KEY).',
      )
    if (error.code === 'invalid_code')
      throw new Error(
        'That code is wrong, expired or used already. Type the code the app shows now (check that its clock is right).',
      )
    if (error.code === 'enrolment_not_found')
      throw new Error('This set-up was replaced or has ended: start again with "Set up".')
  }
  throw error
}

/** The signed-in person's own second factors, and, for `*` holders, removing another person's. */
export function Security(props: { user: User; onSessionEnded: (notice: Notice) => void }) {
  return (
    <section aria-labelledby="security-title" class="modules">
      <div class="section-head">
        <h2 id="security-title">Security</h2>
      </div>
      <div class="cards">
        <Totp onSessionEnded={props.onSessionEnded} />
        <Passkeys onSessionEnded={props.onSessionEnded} />
        {isAdmin(props.user.permissions) && (
          <OthersFactors self={props.user.username} onSessionEnded={props.onSessionEnded} />
        )}
      </div>
    </section>
  )
}

/** TOTP: its state; set up (QR code, secret, one code); the recovery codes once. */
function Totp(props: { onSessionEnded: (notice: Notice) => void }) {
  const { alert, status, setStatus, guard } = useFeedback(props.onSessionEnded)
  const [factor, setFactor] = useState<FactorStatus | null>(null)
  const [enrolment, setEnrolment] = useState<TotpEnrolment | null>(null)
  const [codes, setCodes] = useState<string[] | null>(null)
  const [busy, setBusy] = useState(false)

  const refresh = async () => {
    const answer = await guard(factorStatus)
    if (answer !== undefined) setFactor(answer)
  }
  useEffect(() => {
    void refresh()
  }, [])

  const begin = async () => {
    setBusy(true)
    const started = await guard(() => startTotp().catch(explain))
    setBusy(false)
    if (started === undefined) return
    setEnrolment(started)
    setStatus('Scan the QR code or type the secret into your authenticator app, then give one code.')
  }

  const confirm = async (event: Event) => {
    event.preventDefault()
    if (busy) return
    const data = new FormData(event.currentTarget as HTMLFormElement)
    const code = String(data.get('code') ?? '').replace(/\s+/g, '')
    setBusy(true)
    const confirmed = await guard(() => confirmTotp(code).catch(explain))
    setBusy(false)
    if (confirmed === undefined) return
    setEnrolment(null)
    setCodes(confirmed)
    setStatus('Authenticator app enrolled. Save your recovery codes now.')
    await refresh()
  }

  return (
    <section class="card security" aria-labelledby="totp-title">
      <h3 id="totp-title">Authenticator app</h3>
      <Feedback alert={alert} status={status} />
      {factor === null && alert === null && <p class="muted">Loading…</p>}
      {factor?.totp === 'enrolled' && codes === null && (
        <p>
          <span class="badge ok">Enrolled</span>{' '}
          {factor.recovery_codes === 1
            ? '1 recovery code left'
            : `${factor.recovery_codes} recovery codes left`}
          . An administrator can remove it if you lose the app.
        </p>
      )}
      {factor !== null && factor.totp !== 'enrolled' && enrolment === null && (
        <>
          <p class="muted hint">
            A code from an app on your phone (any TOTP app) after your password, at flowadmin's sign-in page.
            Setting it up ends your other sessions (other browsers and tabs, not this one); your API tokens
            keep working.
          </p>
          <button type="button" class="button primary" disabled={busy} onClick={() => void begin()}>
            Set up
          </button>
        </>
      )}
      {enrolment !== null && (
        <form class="enrol" onSubmit={confirm} aria-label="Set up the authenticator app">
          <img class="qr" src={enrolment.qr} alt="QR code of the secret, for the authenticator app" />
          <div class="enrol-steps">
            <p>Scan the QR code with the app, or type the secret:</p>
            <div class="field">
              <label for="totp-secret">Secret</label>
              <input id="totp-secret" type="text" readonly value={enrolment.secret} class="mono secret" />
            </div>
            <div class="install-fields">
              <div class="field">
                <label for="totp-code">Code from the app</label>
                <input
                  id="totp-code"
                  name="code"
                  type="text"
                  inputmode="numeric"
                  autocomplete="one-time-code"
                  maxlength={64}
                  required
                />
              </div>
              <button type="submit" class="button primary" disabled={busy}>
                Confirm
              </button>
              <button type="button" class="button" onClick={() => setEnrolment(null)}>
                Cancel
              </button>
            </div>
            <p class="muted hint">Confirming ends your other sessions; this one stays.</p>
          </div>
        </form>
      )}
      {codes !== null && (
        <section class="created" aria-labelledby="codes-title">
          <h4 id="codes-title">Recovery codes</h4>
          <p>
            Save these now, somewhere apart from your phone: each one signs you in once instead of a code if
            you lose the app. They are not shown again.
          </p>
          <ul class="codes mono" aria-label="Recovery codes">
            {codes.map((code) => (
              <li key={code}>{code}</li>
            ))}
          </ul>
          <button type="button" class="button primary" onClick={() => setCodes(null)}>
            Done
          </button>
        </section>
      )}
    </section>
  )
}

/** For `*` holders: remove another person's second factors (a lost phone), which ends their sessions. */
function OthersFactors(props: { self: string | undefined; onSessionEnded: (notice: Notice) => void }) {
  const { alert, status, setStatus, guard } = useFeedback(props.onSessionEnded)
  const [people, setPeople] = useState<string[]>([])
  const [confirming, setConfirming] = useState<string | null>(null)

  useEffect(() => {
    listPeople().then(
      (listed) => setPeople(listed.filter((name) => name !== props.self)),
      () => setPeople([]),
    )
  }, [])

  const ask = (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const user = String(new FormData(form).get('user') ?? '').trim()
    if (user !== '') setConfirming(user)
  }

  const remove = async (user: string) => {
    setConfirming(null)
    const removed = await guard(() => removeFactors(user))
    if (removed === undefined) return
    setStatus(
      removed
        ? `${user}'s second factors removed and their sessions ended. They sign in with their password until they set one up again.`
        : `${user} has no second factor: nothing was changed.`,
    )
  }

  return (
    <section class="card security" aria-labelledby="others-title">
      <h3 id="others-title">Another person's second factors</h3>
      <p class="muted hint">
        When someone has lost their authenticator app or passkeys: removing them ends that person's sessions,
        and they sign in with their password alone until they set one up again.
      </p>
      <Feedback alert={alert} status={status} />
      <form class="install-fields" onSubmit={ask} aria-label="Remove a person's second factors">
        <div class="field grow">
          <label for="factor-user">Username</label>
          <input id="factor-user" name="user" type="text" list="factor-people" autocomplete="off" required />
          <datalist id="factor-people">
            {people.map((name) => (
              <option value={name} />
            ))}
          </datalist>
        </div>
        <button type="submit" class="button danger">
          Remove second factors
        </button>
      </form>
      {confirming !== null && (
        <Confirm
          question={`Remove every second factor of ${confirming} (authenticator app, recovery codes, passkeys) and end all their sessions?`}
          onConfirm={() => void remove(confirming)}
          onCancel={() => setConfirming(null)}
        />
      )}
    </section>
  )
}
