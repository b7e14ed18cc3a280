import { type FleetInstance, listFleetInstances, type Notice } from './api.js'
import { ListView } from './list-view.js'
import { Time } from './time.js'

/** What each drift reason means to a person. */
const REASONS: Record<string, string> = {
  pending: 'not applied yet',
  refused: 'refused by Node-RED',
  install_failed: 'install failed',
  remove_failed: 'removal failed',
  installed_by_hand: 'installed by hand',
}

/** Each module where an instance differs from the desired state, with the reason; or "none". */
function Drift(props: { instance: FleetInstance }) {
  const { instance } = props
  if (instance.drift.length === 0) return <>none</>
  return (
    <ul class="drift" aria-label={`Drift of ${instance.id}`}>
      {instance.drift.map((entry) => (
        <li key={entry.module}>
          <code>{entry.module}</code>: {REASONS[entry.reason] ?? entry.reason}
          {entry.message !== undefined && ` (${entry.message})`}
        </li>
      ))}
    </ul>
  )
}

/**
 * Fleet mode: every Node-RED instance whose helper reports here, whether it is in touch (or since
 * when not), its Node-RED version, its last report, and each module where it differs from the
 * desired state, with the reason.
 */
export function Fleet(props: { onSessionEnded: (notice: Notice) => void }) {
  return (
    <ListView
      id="fleet"
      title="Fleet"
      hint="The Node-RED instances that apply this server's node modules. Drift is a module where an instance differs from what the Node modules page says."
      label="Instances"
      empty="No instance has reported yet: give their helper the option fleet: true."
      load={listFleetInstances}
      card={(instance: FleetInstance) => ({
        id: instance.id,
        tags: (
          <span class={instance.connected ? 'tag' : 'tag warn'}>
            {instance.connected ? 'connected' : 'not connected'}
          </span>
        ),
        facts: [
          ['Node-RED', instance.nodeRedVersion ?? 'not reported yet'],
          [instance.connected ? 'Last seen' : 'Not seen since', <Time at={instance.lastSeen} />],
          ['Last report', <Time at={instance.lastReport} otherwise="none yet" />],
          ['Drift', <Drift instance={instance} />],
        ],
      })}
      onSessionEnded={props.onSessionEnded}
    />
  )
}
