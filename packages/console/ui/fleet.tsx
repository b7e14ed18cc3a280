import { useEffect } from 'hono/jsx/dom'
import { type FleetInstance, listFleetInstances, type Notice } from './api.js'
import { Feedback, useRefreshedList } from './feedback.js'
import { when } from './sessions.js'

/** What each drift reason means to a person. */
const REASONS: Record<string, string> = {
  pending: 'not applied yet',
  applying: 'applying now',
  refused: 'refused by Node-RED',
  install_failed: 'install failed',
  remove_failed: 'removal failed',
  version_mismatch: 'another version',
  restart_needed: 'restart Node-RED to load the new version',
  changed_by_hand: 'changed by hand',
  removed_by_hand: 'removed by hand',
  installed_by_hand: 'installed by hand',
}

/** Milliseconds between the view's own refreshes: connections and drift change by themselves. */
const REFRESH_MS = 5000

/** A drift entry in words: the reason, who made a hand change, the message. */
const driftText = (entry: FleetInstance['drift'][number]) =>
  `${REASONS[entry.reason] ?? entry.reason}${entry.by ? ` by ${entry.by}` : ''}${
    entry.message !== undefined ? ` (${entry.message})` : ''
  }`

/**
 * Fleet mode: every Node-RED instance whose helper reports here, whether it is in touch (or since
 * when not), its Node-RED version, its last report, and each module where it differs from the
 * desired state, with the reason.
 */
export function Fleet(props: { onSessionEnded: (notice: Notice) => void }) {
  const {
    items: instances,
    refresh,
    alert,
    status,
  } = useRefreshedList<FleetInstance>(listFleetInstances, 'Instances refreshed.', props.onSessionEnded)
  useEffect(() => {
    const timer = setInterval(() => void refresh(false), REFRESH_MS)
    return () => clearInterval(timer)
  }, [])

  return (
    <section aria-labelledby="fleet-title" class="modules">
      <div class="section-head">
        <h2 id="fleet-title">Fleet</h2>
        <button type="button" class="button" onClick={() => void refresh(true)}>
          Refresh
        </button>
      </div>
      <p class="muted hint">
        The Node-RED instances that apply this server's node modules, refreshed every few seconds. Drift is a
        module where an instance differs from what the Node modules page says.
      </p>
      <Feedback alert={alert} status={status} />
      {instances === null && alert === null && <p class="muted">Loading instances…</p>}
      {instances !== null && instances.length === 0 && (
        <p class="muted">No instance has reported yet: give their helper the option fleet: true.</p>
      )}
      {instances !== null && instances.length > 0 && (
        <ul class="cards" aria-label="Instances">
          {instances.map((instance) => (
            <li class="card token" key={instance.id}>
              <div class="token-main">
                <div class="title">
                  <h3>{instance.id}</h3>
                  <span class={instance.connected ? 'tag' : 'tag warn'}>
                    {instance.connected ? 'connected' : 'not connected'}
                  </span>
                </div>
                <dl class="facts">
                  <dt>Node-RED</dt>
                  <dd>{instance.nodeRedVersion ?? 'not reported yet'}</dd>
                  <dt>{instance.connected ? 'Last seen' : 'Not seen since'}</dt>
                  <dd>
                    <time datetime={instance.lastSeen}>{when(instance.lastSeen, '')}</time>
                  </dd>
                  <dt>Last report</dt>
                  <dd>
                    {instance.lastReport === null ? (
                      'none yet'
                    ) : (
                      <time datetime={instance.lastReport}>{when(instance.lastReport, '')}</time>
                    )}
                  </dd>
                  <dt>Drift</dt>
                  <dd>
                    {instance.drift.length === 0 ? (
                      'none'
                    ) : (
                      <ul class="drift" aria-label={`Drift of ${instance.id}`}>
                        {instance.drift.map((entry) => (
                          <li key={entry.module}>
                            <code>{entry.module}</code>: {driftText(entry)}
                          </li>
                        ))}
                      </ul>
                    )}
                  </dd>
                </dl>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}
