import { useState } from 'hono/jsx/dom'
import { type Rollout, rollBack, type Snapshot, type Strategy, setMode, startRollout } from './api-flows.js'
import { Confirm } from './confirm.js'
import { type Change, type GroupEntry, idOf, rolloutName, type SnapshotName } from './flows-shared.js'
import { Variables } from './flows-variables.js'
import { Switch } from './switch.js'
import { Time } from './time.js'

/** What each mode means to a person. */
const MODES = {
  report: 'report: flows changed on an instance are reported as drift',
  enforce: 'enforce: flows changed on an instance are deployed again',
} as const

/** A rollout as a person reads it: its snapshot, a rollback said so, and its state. */
const describeRollout = (rollout: Rollout, name: SnapshotName) =>
  `${rolloutName(rollout, name)}, ${rollout.state}`

/** The form that rolls a snapshot out to the group: all at once, or the first N instances first. */
function RolloutForm(props: { group: string; snapshots: Snapshot[]; change: Change }) {
  const [staged, setStaged] = useState(false)
  const [busy, setBusy] = useState(false)
  const { group } = props
  const newest = [...props.snapshots].sort((a, b) => b.createdAt.localeCompare(a.createdAt))
  const submit = async (event: Event) => {
    event.preventDefault()
    const data = new FormData(event.target as HTMLFormElement)
    const snapshot = String(data.get('snapshot') ?? '')
    const strategy: Strategy = staged
      ? { kind: 'staged', first: Number(data.get('first') ?? 1) }
      : { kind: 'all' }
    const chosen = newest.find((each) => each.id === snapshot)
    setBusy(true)
    await props.change(
      () => startRollout(group, snapshot, strategy),
      `${chosen === undefined ? snapshot : `${chosen.name}@${chosen.version}`} is rolling out to ${group}.`,
    )
    setBusy(false)
  }
  return (
    <form
      class="install-fields flows-form"
      aria-label={`Roll out to ${group}`}
      onSubmit={(event: Event) => void submit(event)}
    >
      <div class="field grow">
        <label for={idOf(group, 'snapshot')}>Snapshot</label>
        <select id={idOf(group, 'snapshot')} name="snapshot" required>
          {newest.map((snapshot) => (
            <option key={snapshot.id} value={snapshot.id}>
              {snapshot.name}@{snapshot.version}
            </option>
          ))}
        </select>
      </div>
      <fieldset class="choices">
        <legend>How</legend>
        <label>
          <input
            type="radio"
            name="strategy"
            value="all"
            checked={!staged}
            onChange={() => setStaged(false)}
          />
          All at once
        </label>
        <label>
          <input
            type="radio"
            name="strategy"
            value="staged"
            checked={staged}
            onChange={() => setStaged(true)}
          />
          Staged
        </label>
      </fieldset>
      {staged && (
        <div class="field">
          <label for={idOf(group, 'first')}>Instances first</label>
          <input id={idOf(group, 'first')} name="first" type="number" min="1" value="1" required />
        </div>
      )}
      <button type="submit" class="button primary" disabled={busy}>
        Roll out
      </button>
    </form>
  )
}

/** Each instance of the group: the rollout it deployed last, the rev it runs, and drift. */
function Instances(props: { entry: GroupEntry; rollouts: Map<string, Rollout>; name: SnapshotName }) {
  const { group, instances } = props.entry.flows
  if (instances.length === 0) return <p class="muted">No instance of the group has reported yet.</p>
  const deployed = (id: string | null) => {
    if (id === null) return 'none yet'
    const rollout = props.rollouts.get(id)
    if (rollout === undefined) return id
    return rolloutName(rollout, props.name)
  }
  return (
    <table class="activity" tabindex={0} aria-label={`Flows of the instances of ${group}`}>
      <thead>
        <tr>
          <th scope="col">Instance</th>
          <th scope="col">Rollout deployed</th>
          <th scope="col">Rev</th>
          <th scope="col">Drift</th>
        </tr>
      </thead>
      <tbody>
        {instances.map((each) => (
          <tr key={each.instance}>
            <td>{each.instance}</td>
            <td>{deployed(each.rollout)}</td>
            <td>
              <code>{each.rev ?? '—'}</code>
            </td>
            <td>
              {each.drift === null ? (
                'none'
              ) : (
                <span class="warn-text">
                  flows changed on the instance: rev <code>{each.drift.rev}</code>
                  {each.drift.by === null ? '' : ` by ${each.drift.by}`}, <Time at={each.drift.at} />
                </span>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

/**
 * A group's flows: its mode (a switch for who may write), its target, what a rollback goes back
 * to, a rollout and a rollback, each instance's flows, and the group's variables.
 */
export function GroupCard(props: {
  entry: GroupEntry
  snapshots: Snapshot[]
  rollouts: Map<string, Rollout>
  name: SnapshotName
  writable: boolean
  change: Change
}) {
  const [confirming, setConfirming] = useState(false)
  const [busy, setBusy] = useState(false)
  const { flows } = props.entry
  const { group, mode, target, latest, previous } = flows
  const titleId = idOf(group, 'title')

  const toggle = async () => {
    const next = mode === 'enforce' ? 'report' : 'enforce'
    setBusy(true)
    await props.change(
      () => setMode(group, next),
      `The flows of ${group} are ${next === 'enforce' ? 'enforced' : 'reported'} now.`,
    )
    setBusy(false)
  }
  const back = async () => {
    setConfirming(false)
    setBusy(true)
    await props.change(
      () => rollBack(group),
      `${group} is rolling back to ${previous === null ? 'its previous snapshot' : props.name(previous)}.`,
    )
    setBusy(false)
  }

  return (
    <li class="card token group" aria-labelledby={titleId}>
      <div class="token-main">
        <div class="title">
          <h4 id={titleId}>{group}</h4>
          <span class="tag">{mode}</span>
        </div>
        <dl class="facts">
          <dt>Mode</dt>
          <dd class="mode">
            {props.writable && (
              <Switch
                checked={mode === 'enforce'}
                label={`Enforce the flows of ${group}`}
                disabled={busy}
                busy={busy}
                onToggle={() => void toggle()}
              />
            )}
            {MODES[mode]}
          </dd>
          <dt>Target</dt>
          <dd>
            {target === null ? 'none released to the whole group' : describeRollout(target, props.name)}
          </dd>
          {latest !== null && latest.id !== target?.id && (
            <>
              <dt>Latest rollout</dt>
              <dd>
                {describeRollout(latest, props.name)}
                {latest.reason === null ? '' : ` (${latest.reason})`}
              </dd>
            </>
          )}
          <dt>A rollback goes back to</dt>
          <dd>{previous === null ? 'nothing yet' : props.name(previous)}</dd>
        </dl>
        {props.writable && props.snapshots.length > 0 && (
          <RolloutForm group={group} snapshots={props.snapshots} change={props.change} />
        )}
        {props.writable && previous !== null && (
          <div class="actions flows-actions">
            <button
              type="button"
              class="button"
              aria-label={`Roll back ${group}`}
              disabled={busy}
              onClick={() => setConfirming(true)}
            >
              Roll back
            </button>
          </div>
        )}
        {confirming && previous !== null && (
          <Confirm
            question={`Roll ${group} back to ${props.name(previous)}? Every instance of the group deploys it.`}
            yes="Yes, roll back"
            onConfirm={() => void back()}
            onCancel={() => setConfirming(false)}
          />
        )}
        <h5>Instances</h5>
        <Instances entry={props.entry} rollouts={props.rollouts} name={props.name} />
        <Variables
          group={group}
          variables={props.entry.variables}
          writable={props.writable}
          change={props.change}
        />
      </div>
    </li>
  )
}
