import { useState } from 'hono/jsx/dom'
import { type CreatedEnrolment, createEnrolment } from './api-fleet.js'

/** What the form's lifetimes offer, in seconds. */
const LIFETIMES = [
  { label: '1 hour', seconds: 3600 },
  { label: '1 day', seconds: 86_400 },
  { label: '7 days', seconds: 604_800 },
]

/**
 * An operator's form that makes an enrolment token for the fleet (one instance, or several), and
 * shows the token this once. `guard` reports a refusal; `setStatus` says what was done.
 */
export function EnrolForm(props: {
  servers: string[]
  guard: <T>(work: () => Promise<T>) => Promise<T | undefined>
  setStatus: (status: string) => void
}) {
  const [created, setCreated] = useState<CreatedEnrolment | null>(null)
  const [busy, setBusy] = useState(false)

  const create = async (event: Event) => {
    event.preventDefault()
    const form = event.target as HTMLFormElement
    const data = new FormData(form)
    const instance = String(data.get('instance') ?? '').trim()
    setBusy(true)
    const made = await props.guard(() =>
      createEnrolment({
        resourceServer: String(data.get('resourceServer') ?? '').trim(),
        uses: Number(data.get('uses') ?? 1),
        expiresIn: Number(data.get('lifetime')),
        instance: instance === '' ? null : instance,
      }),
    )
    setBusy(false)
    if (made === undefined) return
    form.reset()
    setCreated(made)
    props.setStatus('Enrolment token created.')
  }

  const copy = async () => {
    if (created === null) return
    try {
      await navigator.clipboard.writeText(created.token)
      props.setStatus('Token copied to the clipboard.')
    } catch {
      props.setStatus('Copying was refused: select the token and copy it by hand.')
    }
  }

  return (
    <>
      <form class="card install" onSubmit={create} aria-labelledby="enrol-title">
        <h3 id="enrol-title">Enrol an instance</h3>
        <p class="muted hint">
          An enrolment token for a Node-RED instance's helper, which exchanges it once for a credential of its
          own.
        </p>
        <div class="install-fields">
          <div class="field">
            <label for="enrol-server">Resource server</label>
            <input
              id="enrol-server"
              name="resourceServer"
              type="text"
              list="enrol-servers"
              value={props.servers[0] ?? 'fleet'}
              autocomplete="off"
              required
            />
            <datalist id="enrol-servers">
              {props.servers.map((id) => (
                <option value={id}>{id}</option>
              ))}
            </datalist>
          </div>
          <div class="field">
            <label for="enrol-instance">Instance id (optional)</label>
            <input
              id="enrol-instance"
              name="instance"
              type="text"
              placeholder="e.g. line-3-press"
              autocomplete="off"
            />
          </div>
          <div class="field">
            <label for="enrol-uses">Instances</label>
            <input id="enrol-uses" name="uses" type="number" min="1" max="1000" value="1" required />
          </div>
          <div class="field">
            <label for="enrol-lifetime">Expires after</label>
            <select id="enrol-lifetime" name="lifetime">
              {LIFETIMES.map((lifetime) => (
                <option value={String(lifetime.seconds)}>{lifetime.label}</option>
              ))}
            </select>
          </div>
          <button type="submit" class="button primary" disabled={busy}>
            Create
          </button>
        </div>
      </form>
      {created !== null && (
        <section class="card created" aria-labelledby="enrolment-title">
          <h3 id="enrolment-title">
            Enrolment token for{' '}
            {created.instance ?? (created.uses === 1 ? 'one instance' : `${created.uses} instances`)}
          </h3>
          <p>Give it to the instance's helper now: it is shown only this once.</p>
          <div class="install-fields">
            <div class="field grow">
              <label for="enrolment-token">Token</label>
              <input id="enrolment-token" type="text" readonly value={created.token} class="mono" />
            </div>
            <button type="button" class="button primary" onClick={() => void copy()}>
              Copy
            </button>
            <button type="button" class="button" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        </section>
      )}
    </>
  )
}
