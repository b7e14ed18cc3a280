import { useState } from 'hono/jsx/dom'
import { logIn, type Prompt, type SignInButton, signInUrl } from './api.js'

const AUTOCOMPLETE: Record<string, string> = { username: 'username', password: 'current-password' }

/** The identity provider's button: a link to `/auth/strategy`, which sends the browser there. */
function SignIn(props: { button: SignInButton; primary: boolean }) {
  return (
    <a class={props.primary ? 'button primary sso' : 'button sso'} href={signInUrl(props.button)}>
      {props.button.label}
    </a>
  )
}

export function LoginForm(props: {
  prompts: Prompt[]
  button: SignInButton | null
  notice: string | null
  onDone: () => void
}) {
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)

  const submit = async (event: Event) => {
    event.preventDefault()
    if (busy) return
    const form = event.currentTarget as HTMLFormElement
    const fields: Record<string, string> = {}
    for (const prompt of props.prompts) {
      const input = form.elements.namedItem(prompt.id)
      fields[prompt.id] = input instanceof HTMLInputElement ? input.value : ''
    }
    setBusy(true)
    setError(null)
    try {
      const result = await logIn(fields)
      if (result.ok) props.onDone()
      else setError(result.message)
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure))
    } finally {
      setBusy(false)
    }
  }

  const notice = props.notice !== null && (
    <p class="notice" role="status">
      {props.notice}
    </p>
  )
  // Only the identity provider signs people in here: its button is the whole page.
  if (props.prompts.length === 0 && props.button !== null) {
    return (
      <section class="panel login" aria-labelledby="login-title">
        <h2 id="login-title">Log in</h2>
        {notice}
        <SignIn button={props.button} primary={true} />
      </section>
    )
  }

  return (
    <form class="panel login" onSubmit={submit} aria-labelledby="login-title" noValidate>
      <h2 id="login-title">Log in</h2>
      {notice}
      {props.prompts.map((prompt, index) => (
        <div class="field" key={prompt.id}>
          <label for={`login-${prompt.id}`}>{prompt.label}</label>
          <input
            id={`login-${prompt.id}`}
            name={prompt.id}
            type={prompt.type === 'password' ? 'password' : 'text'}
            autocomplete={AUTOCOMPLETE[prompt.id] ?? 'off'}
            autocapitalize="none"
            spellcheck={false}
            required
            autofocus={index === 0}
          />
        </div>
      ))}
      {error !== null && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <button type="submit" class="button primary" aria-busy={busy ? 'true' : 'false'}>
        {busy ? 'Logging in…' : 'Log in'}
      </button>
      {props.button !== null && <SignIn button={props.button} primary={false} />}
    </form>
  )
}
