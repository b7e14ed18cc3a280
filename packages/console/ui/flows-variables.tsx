import { useState } from 'hono/jsx/dom'
import { removeVariable, setVariable, type Variable } from './api-flows.js'
import { Confirm } from './confirm.js'
import { type Change, idOf } from './flows-shared.js'
import { Time } from './time.js'

/**
 * A group's flow variables, which its instances' flows read as `${NAME}`: listed (a secret's value
 * never shown), set (a secret one sealed at rest) and removed by who may write.
 */
export function Variables(props: {
  group: string
  variables: Variable[]
  writable: boolean
  change: Change
}) {
  const [confirming, setConfirming] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const { group } = props

  const set = async (event: Event) => {
    event.preventDefault()
    const form = event.target as HTMLFormElement
    const data = new FormData(form)
    const name = String(data.get('name') ?? '').trim()
    const secret = data.get('secret') !== null
    setBusy(true)
    const done = await props.change(
      () => setVariable(group, name, String(data.get('value') ?? ''), secret),
      `${name} is set for ${group}${secret ? ', as a secret' : ''}.`,
    )
    setBusy(false)
    if (done) form.reset()
  }
  const remove = async (name: string) => {
    setConfirming(null)
    setBusy(true)
    await props.change(() => removeVariable(group, name), `${name} was removed from ${group}.`)
    setBusy(false)
  }

  return (
    <>
      <h5>Variables</h5>
      {props.variables.length === 0 ? (
        <p class="muted">No variable.</p>
      ) : (
        <table class="activity" tabindex={0} aria-label={`Variables of ${group}`}>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Value</th>
              <th scope="col">Set</th>
              {props.writable && <th scope="col">Remove</th>}
            </tr>
          </thead>
          <tbody>
            {props.variables.map((variable) => (
              <tr key={variable.name}>
                <td>
                  <code>{variable.name}</code>
                </td>
                <td>
                  {variable.value === null ? (
                    <>
                      <span aria-hidden="true">••••</span>
                      <span class="sr-only">secret, not shown</span>
                    </>
                  ) : (
                    <code>{variable.value}</code>
                  )}
                  {variable.secret && <span class="tag">secret</span>}
                </td>
                <td>
                  <Time at={variable.at} />
                  {variable.by === null ? '' : ` by ${variable.by}`}
                </td>
                {props.writable && (
                  <td>
                    <button
                      type="button"
                      class="button"
                      aria-label={`Remove ${variable.name} from ${group}`}
                      disabled={busy}
                      onClick={() => setConfirming(variable.name)}
                    >
                      Remove
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {confirming !== null && (
        <Confirm
          question={`Remove ${confirming} from ${group}? Its instances deploy their flows again without it.`}
          onConfirm={() => void remove(confirming)}
          onCancel={() => setConfirming(null)}
        />
      )}
      {props.writable && (
        <form
          class="install-fields flows-form"
          aria-label={`Set a variable of ${group}`}
          onSubmit={(event: Event) => void set(event)}
        >
          <div class="field">
            <label for={idOf(group, 'variable-name')}>Name</label>
            <input
              id={idOf(group, 'variable-name')}
              name="name"
              type="text"
              pattern="[A-Za-z_][A-Za-z0-9_]{0,63}"
              title="1 to 64 letters, digits or _, not starting with a digit"
              autocomplete="off"
              required
            />
          </div>
          <div class="field grow">
            <label for={idOf(group, 'variable-value')}>Value</label>
            <input
              id={idOf(group, 'variable-value')}
              name="value"
              type="text"
              maxlength={4096}
              autocomplete="off"
            />
          </div>
          <label class="check">
            <input name="secret" type="checkbox" />
            Secret
          </label>
          <button type="submit" class="button primary" disabled={busy}>
            Set
          </button>
        </form>
      )}
    </>
  )
}
