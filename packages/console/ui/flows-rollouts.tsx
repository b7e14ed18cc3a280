import type { RolloutState, RolloutView, Strategy } from './api-flows.js'
import type { SnapshotName } from './flows-shared.js'
import { Time } from './time.js'

/** The badge of each state: done well, done badly, or under way. */
const BADGES: Record<RolloutState, string> = {
  pending: 'badge',
  running: 'badge',
  succeeded: 'badge ok',
  stopped: 'badge bad',
  failed: 'badge bad',
}

const strategyOf = (strategy: Strategy) =>
  strategy.kind === 'all'
    ? 'all at once'
    : `staged: the first ${strategy.first} instance${strategy.first === 1 ? '' : 's'} first`

/** What each instance said of the rollout, and which have not said yet. */
function Outcomes(props: { rollout: RolloutView; label: string }) {
  const { rollout } = props
  return (
    <>
      {rollout.outcomes.length > 0 && (
        <table class="activity" tabindex={0} aria-label={`Outcomes of ${props.label}`}>
          <thead>
            <tr>
              <th scope="col">Instance</th>
              <th scope="col">Outcome</th>
              <th scope="col">Rev</th>
              <th scope="col">Message</th>
              <th scope="col">Missing credentials</th>
              <th scope="col">When</th>
            </tr>
          </thead>
          <tbody>
            {rollout.outcomes.map((outcome) => (
              <tr key={outcome.instance} class={outcome.outcome === 'failed' ? 'failure' : undefined}>
                <td>{outcome.instance}</td>
                <td>{outcome.outcome}</td>
                <td>
                  <code>{outcome.rev ?? '—'}</code>
                </td>
                <td>{outcome.message ?? ''}</td>
                <td>
                  {outcome.missingCredentials.length === 0 ? 'none' : outcome.missingCredentials.join(', ')}
                </td>
                <td>
                  <Time at={outcome.at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {rollout.waiting.length > 0 && <p class="muted">Waiting for {rollout.waiting.join(', ')}.</p>}
    </>
  )
}

/** The rollouts, newest first (the newest with their outcomes), refreshed while one is under way. */
export function Rollouts(props: { total: number; details: RolloutView[]; name: SnapshotName }) {
  return (
    <section aria-labelledby="rollouts-title" class="flows-part">
      <h3 id="rollouts-title">Rollouts</h3>
      {props.total === 0 ? (
        <p class="muted">No rollout yet.</p>
      ) : (
        <ul class="cards" aria-label="Rollouts">
          {props.details.map((rollout) => {
            const label = `${rollout.kind === 'rollback' ? 'Rollback' : 'Rollout'} ${rollout.sequence}: ${props.name(rollout.snapshot)} to ${rollout.group}`
            const titleId = `rollout-${rollout.id}`
            return (
              <li class="card token group" key={rollout.id} aria-labelledby={titleId}>
                <div class="token-main">
                  <div class="title">
                    <h4 id={titleId}>{label}</h4>
                    <span class={BADGES[rollout.state]}>{rollout.state}</span>
                  </div>
                  <dl class="facts">
                    <dt>Strategy</dt>
                    <dd>
                      {strategyOf(rollout.strategy)}
                      {rollout.strategy.kind === 'staged' && !rollout.released ? ' (first stage)' : ''}
                    </dd>
                    <dt>Instances</dt>
                    <dd>{rollout.instances.length === 0 ? 'none' : rollout.instances.join(', ')}</dd>
                    <dt>Made</dt>
                    <dd>
                      <Time at={rollout.createdAt} />
                      {rollout.createdBy === null ? '' : ` by ${rollout.createdBy}`}
                    </dd>
                    {rollout.reason !== null && (
                      <>
                        <dt>Why</dt>
                        <dd>{rollout.reason}</dd>
                      </>
                    )}
                  </dl>
                  <Outcomes rollout={rollout} label={label} />
                </div>
              </li>
            )
          })}
        </ul>
      )}
      {props.total > props.details.length && (
        <p class="muted">
          The newest {props.details.length} of {props.total} rollouts.
        </p>
      )}
    </section>
  )
}
