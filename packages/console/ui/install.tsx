import { useState } from 'hono/jsx/dom'
import { installModule, type NodeModule } from './api.js'

/** "Install a module": a package name and an optional version range, with visible progress. */
export function InstallForm(props: {
  guard: <T>(work: () => Promise<T>) => Promise<T | undefined>
  onInstalled: (module: NodeModule) => void
}) {
  const [busy, setBusy] = useState<string | null>(null)

  const submit = async (event: Event) => {
    event.preventDefault()
    if (busy !== null) return
    const form = event.currentTarget as HTMLFormElement
    const field = (name: string) => {
      const input = form.elements.namedItem(name)
      return input instanceof HTMLInputElement ? input.value.trim() : ''
    }
    const name = field('module')
    if (name === '') return
    const version = field('version')
    setBusy(name)
    const module = await props.guard(() => installModule(name, version === '' ? undefined : version))
    setBusy(null)
    if (module !== undefined) {
      form.reset()
      props.onInstalled(module)
    }
  }

  return (
    <form class="card install" onSubmit={submit} aria-labelledby="install-title">
      <h3 id="install-title">Install a module</h3>
      <div class="install-fields">
        <div class="field grow">
          <label for="install-module">Package name</label>
          <input
            id="install-module"
            name="module"
            type="text"
            placeholder="node-red-contrib-example"
            autocomplete="off"
            autocapitalize="none"
            spellcheck={false}
            required
          />
        </div>
        <div class="field">
          <label for="install-version">Version (optional)</label>
          <input
            id="install-version"
            name="version"
            type="text"
            placeholder="^1.2.0"
            autocomplete="off"
            spellcheck={false}
          />
        </div>
        <button type="submit" class="button primary" disabled={busy !== null}>
          Install
        </button>
      </div>
      {busy !== null && (
        <p class="progress" role="status">
          <progress aria-label={`Installing ${busy}`} />
          Installing {busy}: npm is fetching it, which can take a minute…
        </p>
      )}
    </form>
  )
}
