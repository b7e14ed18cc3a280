import { useState } from 'hono/jsx/dom'
import { downloadSnapshot, type Snapshot, uploadSnapshot } from './api-flows.js'
import type { Change } from './flows-shared.js'
import { save } from './save.js'
import { Time } from './time.js'

/** The snapshots of flows: a table, newest name last, each downloadable; an upload for who may write. */
export function Snapshots(props: {
  snapshots: Snapshot[]
  writable: boolean
  guard: <T>(work: () => Promise<T>) => Promise<T | undefined>
  change: Change
  setStatus: (status: string) => void
}) {
  const [busy, setBusy] = useState(false)

  const upload = async (event: Event) => {
    event.preventDefault()
    const form = event.target as HTMLFormElement
    const file = (form.elements.namedItem('file') as HTMLInputElement).files?.[0]
    if (file === undefined) return
    setBusy(true)
    const made = await props.change(
      async () => {
        const text = await file.text()
        try {
          JSON.parse(text)
        } catch (error) {
          throw new Error(
            `${file.name} is not JSON: ${error instanceof Error ? error.message : String(error)}`,
          )
        }
        return uploadSnapshot(text)
      },
      (created) =>
        `${created.name}@${created.version} made: ${created.nodes} node${created.nodes === 1 ? '' : 's'}.` +
        (created.unknownTypes.length === 0
          ? ''
          : ` No module is known for the types ${created.unknownTypes.join(', ')}.`),
    )
    setBusy(false)
    if (made) form.reset()
  }

  const download = async (snapshot: Snapshot) => {
    const blob = await props.guard(() => downloadSnapshot(snapshot.id))
    if (blob === undefined) return
    const file = `${snapshot.name}-v${snapshot.version}.json`
    save(blob, file)
    props.setStatus(`${file} downloaded.`)
  }

  return (
    <section aria-labelledby="snapshots-title" class="flows-part">
      <h3 id="snapshots-title">Snapshots</h3>
      {props.writable && (
        <form
          class="card install"
          aria-label="Upload a snapshot"
          onSubmit={(event: Event) => void upload(event)}
        >
          <p class="muted hint">
            A file as a download gives it: <code>name</code>, <code>flows</code> and, optionally,{' '}
            <code>modules</code>. It becomes the next version of its name.
          </p>
          <div class="install-fields">
            <div class="field grow">
              <label for="snapshot-file">Snapshot file (JSON)</label>
              <input id="snapshot-file" name="file" type="file" accept=".json,application/json" required />
            </div>
            <button type="submit" class="button primary" disabled={busy}>
              Upload
            </button>
          </div>
        </form>
      )}
      {props.snapshots.length === 0 ? (
        <p class="muted">No snapshot yet.</p>
      ) : (
        <table class="activity" tabindex={0} aria-label="Snapshots">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Version</th>
              <th scope="col">Nodes</th>
              <th scope="col">Modules</th>
              <th scope="col">Made</th>
              <th scope="col">File</th>
            </tr>
          </thead>
          <tbody>
            {props.snapshots.map((snapshot) => (
              <tr key={snapshot.id}>
                <td>{snapshot.name}</td>
                <td>{snapshot.version}</td>
                <td>{snapshot.nodes}</td>
                <td>
                  {snapshot.modules.length === 0
                    ? 'none'
                    : snapshot.modules.map((module) => `${module.name}@${module.version}`).join(', ')}
                </td>
                <td>
                  <Time at={snapshot.createdAt} />
                  {snapshot.createdBy === null ? '' : ` by ${snapshot.createdBy}`}
                </td>
                <td>
                  <button
                    type="button"
                    class="button"
                    aria-label={`Download ${snapshot.name}@${snapshot.version}`}
                    onClick={() => void download(snapshot)}
                  >
                    Download
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}
