import { useEffect } from 'hono/jsx/dom'
import { canWriteNodes, type Notice, type User } from './api.js'
import { type FleetInstance, listFleetInstances } from './api-fleet.js'
import { EnrolForm } from './enrol.js'
import { Feedback, useRefreshedList } from './feedback.js'
import { ItemCard, Listed } from './list-view.js'
import { Time } from './time.js'

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

/** Each module where an instance differs from the desired state, with the reason (and who, by hand); or "none". */
function Drift(props: { instance: FleetInstance }) {
  const { instance } = props
  if (instance.drift.length === 0) return <>none</>
  return (
    <ul class="drift" aria-label={`Drift of ${instance.id}`}>
      {instance.drift.map((entry) => (
        <li key={entry.module}>
          <code>{entry.module}</code>: {REASONS[entry.reason] ?? entry.reason}
          {entry.by ? ` by ${entry.by}` : ''}
          {entry.message !== undefined && ` (${entry.message})`}
        </li>
      ))}
    </ul>
  )
}

/**
 * Fleet mode: every Node-RED instance whose helper reports here, whether it is in touch (or since
 * when not), its Node-RED version, its last report, and each module where it differs from the
 * desired state, with the reason. Refreshed by itself every REFRESH_MS, and on its button.
 */
export function Fleet(props: { user: User; onSessionEnded: (notice: Notice) => void }) {
  const { items, refresh, alert, status, guard, setStatus } = useRefreshedList<FleetInstance>(
    listFleetInstances,
    'Instances refreshed.',
    props.onSessionEnded,
  )
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
      {/* Enrolment tokens are made with `nodes.write` on flowadmin: offered only to those who hold it. */}
      {canWriteNodes(props.user.permissions) && (
        <EnrolForm
          servers={[...new Set((items ?? []).map((instance) => instance.resourceServer))]}
          guard={guard}
          setStatus={setStatus}
        />
      )}
      <Listed
        items={items}
        alert={alert}
        loading="Loading instances…"
        empty="No instance has reported yet: give their helper the option fleet: true."
        show={(instances) => (
          <ul class="cards" aria-label="Instances">
            {instances.map((instance) => (
              <ItemCard
                key={instance.id}
                heading={instance.id}
                tags={
                  <>
                    <span class={instance.connected ? 'tag' : 'tag warn'}>
                      {instance.connected ? 'connected' : 'not connected'}
                    </span>
                    {instance.revoked && <span class="tag warn">revoked</span>}
                  </>
                }
                facts={[
                  ['Node-RED', instance.nodeRedVersion ?? 'not reported yet'],
                  [instance.connected ? 'Last seen' : 'Not seen since', <Time at={instance.lastSeen} />],
                  ['Last report', <Time at={instance.lastReport} otherwise="none yet" />],
                  // Its Node-RED's own events (deploys, logins) are filed under this in Activity.
                  ['In Activity', `${instance.resourceServer}/${instance.id}`],
                  ['Drift', <Drift instance={instance} />],
                  [
                    'Enrolled',
                    instance.enrolment === null ? (
                      'no: the shared secret'
                    ) : (
                      <>
                        <Time at={instance.enrolment.at} />
                        {instance.enrolment.by === null ? '' : ` by ${instance.enrolment.by}`}
                      </>
                    ),
                  ],
                ]}
              />
            ))}
          </ul>
        )}
      />
    </section>
  )
}
