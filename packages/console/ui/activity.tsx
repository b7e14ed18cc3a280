import { useCallback, useEffect, useState } from 'hono/jsx/dom'
import { type AuditEvent, type AuditFilters, exportAudit, type Notice, searchAudit } from './api.js'
import { Feedback, useFeedback } from './feedback.js'
import { Listed } from './list-view.js'
import { save } from './save.js'
import { Time } from './time.js'

const FIELDS = [
  { name: 'instance', label: 'Instance', hint: 'flowadmin, a resource server, or server/instance' },
  { name: 'actor', label: 'Person', hint: 'a username' },
  { name: 'event', label: 'Event', hint: 'a prefix, e.g. flows.' },
] as const

/** A `datetime-local` value (the browser's time zone) as ISO 8601 in UTC; '' stays ''. */
const isoOf = (local: string) => (local === '' ? '' : new Date(local).toISOString())

/**
 * The trail: flowadmin's own audit events and its instances', newest first, with the filters of
 * GET /audit, more on demand, and the whole match as CSV or NDJSON. Needs `audit.read`.
 */
export function Activity(props: { onSessionEnded: (notice: Notice) => void }) {
  const [form, setForm] = useState<Record<string, string>>({})
  const [filters, setFilters] = useState<AuditFilters>({})
  const [events, setEvents] = useState<AuditEvent[] | null>(null)
  const [next, setNext] = useState<string | null>(null)
  const { alert, status, setStatus, guard } = useFeedback(props.onSessionEnded)

  const load = useCallback(async (chosen: AuditFilters, cursor: string | null, shown: AuditEvent[]) => {
    const page = await guard(() => searchAudit(chosen, cursor))
    if (page === undefined) return
    const all = [...shown, ...page.events]
    setEvents(all)
    setNext(page.next)
    setStatus(
      `${all.length} event${all.length === 1 ? '' : 's'} shown${page.next === null ? '' : ', more to load'}.`,
    )
  }, [])

  useEffect(() => {
    void load({}, null, [])
  }, [])

  const apply = (event: Event) => {
    event.preventDefault()
    const chosen: AuditFilters = {
      instance: form.instance,
      actor: form.actor,
      event: form.event,
      outcome: form.outcome,
      since: isoOf(form.since ?? ''),
      until: isoOf(form.until ?? ''),
    }
    setFilters(chosen)
    setEvents(null)
    void load(chosen, null, [])
  }
  const download = async (format: 'text/csv' | 'application/x-ndjson') => {
    const blob = await guard(() => exportAudit(filters, format))
    if (blob === undefined) return
    save(blob, format === 'text/csv' ? 'flowadmin-audit.csv' : 'flowadmin-audit.ndjson')
    setStatus('Export downloaded.')
  }
  const set = (name: string) => (event: Event) =>
    setForm({ ...form, [name]: (event.target as HTMLInputElement | HTMLSelectElement).value })

  return (
    <section aria-labelledby="activity-title" class="modules">
      <div class="section-head">
        <h2 id="activity-title">Activity</h2>
        <button type="button" class="button" onClick={() => void download('text/csv')}>
          Export CSV
        </button>
        <button type="button" class="button" onClick={() => void download('application/x-ndjson')}>
          Export NDJSON
        </button>
      </div>
      <p class="muted hint">
        Who did what, on which instance, when: this server's own events and those its Node-RED instances
        report. An address marked "reported" is the instance's word for it.
      </p>
      <form class="filters" aria-label="Filter the activity" onSubmit={apply}>
        {FIELDS.map((field) => (
          <label key={field.name}>
            {field.label}
            <input
              name={field.name}
              placeholder={field.hint}
              value={form[field.name] ?? ''}
              onInput={set(field.name)}
            />
          </label>
        ))}
        <label>
          Outcome
          <select name="outcome" value={form.outcome ?? ''} onChange={set('outcome')}>
            <option value="">any</option>
            <option value="success">success</option>
            <option value="failure">failure</option>
          </select>
        </label>
        <label>
          Since
          <input type="datetime-local" name="since" value={form.since ?? ''} onInput={set('since')} />
        </label>
        <label>
          Until
          <input type="datetime-local" name="until" value={form.until ?? ''} onInput={set('until')} />
        </label>
        <button type="submit" class="button">
          Show
        </button>
      </form>
      <Feedback alert={alert} status={status} />
      <Listed
        items={events}
        alert={alert}
        loading="Loading activity…"
        empty="No event matches."
        show={(shown) => (
          <table class="activity" aria-label="Activity">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Instance</th>
                <th scope="col">Person</th>
                <th scope="col">Event</th>
                <th scope="col">Outcome</th>
                <th scope="col">Address</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((event, index) => (
                <tr
                  key={`${event.time}-${index}`}
                  class={event.outcome === 'failure' ? 'failure' : undefined}
                >
                  <td>
                    <Time at={event.time} />
                  </td>
                  <td>{event.instance}</td>
                  <td>{event.actor ?? '—'}</td>
                  <td>{event.event}</td>
                  <td>{event.outcome}</td>
                  <td>
                    {event.address ?? '—'}
                    {event.address !== null && event.address_reported && <span class="tag">reported</span>}
                  </td>
                  <td>
                    <code>{JSON.stringify(event.details)}</code>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      />
      {next !== null && events !== null && (
        <button type="button" class="button" onClick={() => void load(filters, next, events)}>
          Load more
        </button>
      )}
    </section>
  )
}
