import { patternMatcher } from '@flowadmin/core'
import { useState } from 'hono/jsx/dom'
import { isAdmin, type Notice, type User } from './api.js'
import { assignToGroup, type Group, listGroups, unassignFromGroup } from './api-access.js'
import { type FleetInstance, listFleetInstances } from './api-fleet.js'
import { Confirm } from './confirm.js'
import { Feedback, useRefreshedList } from './feedback.js'
import { Listed } from './list-view.js'
import { Time } from './time.js'

/** An instance of a group: the patterns of the settings that hold it, its assignment, its state. */
interface Member {
  id: string
  patterns: string[]
  assigned: Group['assigned'][number] | null
  /** As the Fleet view shows it; null: it has not reported yet. */
  state: FleetInstance | null
}

interface GroupEntry {
  group: Group
  members: Member[]
}

/** A group's members, by id: the known instances a pattern matches, and those put in it. */
function membersOf(group: Group, instances: FleetInstance[]): Member[] {
  const matchers = group.patterns.map((pattern) => ({ pattern, matches: patternMatcher(pattern) }))
  const byId = new Map(instances.map((instance) => [instance.id, instance]))
  const ids = new Set([
    ...instances
      .filter((instance) => matchers.some(({ matches }) => matches(instance.id)))
      .map(({ id }) => id),
    ...group.assigned.map(({ instance }) => instance),
  ])
  return [...ids].sort().map((id) => ({
    id,
    patterns: matchers.filter(({ matches }) => matches(id)).map(({ pattern }) => pattern),
    assigned: group.assigned.find(({ instance }) => instance === id) ?? null,
    state: byId.get(id) ?? null,
  }))
}

/** An instance's state as the Fleet view shows it: in touch or not, and whether it drifts. */
function State(props: { member: Member }) {
  const { state } = props.member
  if (state === null) return <span class="tag">not reported yet</span>
  return (
    <>
      <span class={state.connected ? 'tag' : 'tag warn'}>
        {state.connected ? 'connected' : 'not connected'}
      </span>
      <span class={state.drift.length === 0 ? 'tag' : 'tag warn'}>
        {state.drift.length === 0
          ? 'no drift'
          : `drift in ${state.drift.length} module${state.drift.length === 1 ? '' : 's'}`}
      </span>
    </>
  )
}

/**
 * Fleet mode: each group of the settings, its patterns and its instances with their state. An
 * operator with every right puts an instance in a group and takes out one put there; the
 * instances a pattern holds are the settings' to decide.
 */
export function Groups(props: { user: User; onSessionEnded: (notice: Notice) => void }) {
  const [known, setKnown] = useState<string[]>([])
  const [confirming, setConfirming] = useState<{ group: string; instance: string } | null>(null)
  const [busy, setBusy] = useState(false)
  const { items, refresh, alert, status, guard, setStatus } = useRefreshedList<GroupEntry>(
    async () => {
      const [groups, instances] = await Promise.all([listGroups(), listFleetInstances()])
      setKnown(instances.map(({ id }) => id))
      return groups.map((group) => ({ group, members: membersOf(group, instances) }))
    },
    'Groups refreshed.',
    props.onSessionEnded,
  )
  const operator = isAdmin(props.user.permissions)

  const change = async (work: () => Promise<void>, done: string) => {
    setBusy(true)
    const changed = await guard(async () => {
      await work()
      return true
    })
    setBusy(false)
    if (changed === undefined) return false
    // The list first: the status line says what was done only once the list shows it.
    await refresh(false)
    setStatus(done)
    return true
  }
  const assign = async (event: Event, group: string) => {
    event.preventDefault()
    const form = event.target as HTMLFormElement
    const instance = String(new FormData(form).get('instance') ?? '').trim()
    if (await change(() => assignToGroup(group, instance), `${instance} is in ${group} now.`)) form.reset()
  }
  const unassign = async (group: string, instance: string) => {
    setConfirming(null)
    await change(() => unassignFromGroup(group, instance), `${instance} was taken out of ${group}.`)
  }

  return (
    <section aria-labelledby="groups-title" class="modules">
      <div class="section-head">
        <h2 id="groups-title">Groups</h2>
        <button type="button" class="button" onClick={() => void refresh(true)}>
          Refresh
        </button>
      </div>
      <p class="muted hint">
        The groups of instances that grants name (the settings' <code>fleet.groups</code>). An instance a
        pattern matches is in the group while the settings say so; an operator with every right on flowadmin
        puts other instances in a group and takes them out.
      </p>
      <Feedback alert={alert} status={status} />
      <Listed
        items={items}
        alert={alert}
        loading="Loading groups…"
        empty="No group: the settings declare them in fleet.groups."
        show={(entries) => (
          <ul class="cards" aria-label="Groups">
            {entries.map(({ group, members }) => (
              <li class="card token group" key={group.name}>
                <div class="token-main">
                  <div class="title">
                    <h3>{group.name}</h3>
                  </div>
                  <dl class="facts">
                    <dt>Patterns</dt>
                    <dd>
                      {group.patterns.length === 0
                        ? 'none: filled by assignments'
                        : group.patterns.join(', ')}
                    </dd>
                  </dl>
                  {members.length === 0 ? (
                    <p class="muted">No instance yet.</p>
                  ) : (
                    <ul class="members" aria-label={`Instances of ${group.name}`}>
                      {members.map((member) => (
                        <li key={member.id}>
                          <div class="title">
                            <strong>{member.id}</strong>
                            <State member={member} />
                          </div>
                          {member.patterns.length > 0 && (
                            <p class="muted">
                              By the pattern {member.patterns.join(', ')}: the settings decide.
                            </p>
                          )}
                          {member.assigned !== null && (
                            <p class="muted">
                              Put in <Time at={member.assigned.at} />
                              {member.assigned.by === null ? '' : ` by ${member.assigned.by}`}.
                            </p>
                          )}
                          {operator && member.assigned !== null && (
                            <button
                              type="button"
                              class="button"
                              aria-label={`Take out ${member.id} from ${group.name}`}
                              disabled={busy}
                              onClick={() => setConfirming({ group: group.name, instance: member.id })}
                            >
                              Take out
                            </button>
                          )}
                          {confirming?.group === group.name && confirming.instance === member.id && (
                            <Confirm
                              question={
                                member.patterns.length > 0
                                  ? `Take ${member.id} out of ${group.name}? A pattern of the settings keeps it in.`
                                  : `Take ${member.id} out of ${group.name}? Its grants there end at its next check.`
                              }
                              onConfirm={() => void unassign(group.name, member.id)}
                              onCancel={() => setConfirming(null)}
                            />
                          )}
                        </li>
                      ))}
                    </ul>
                  )}
                  {operator && (
                    <form
                      class="install-fields"
                      aria-label={`Put an instance in ${group.name}`}
                      onSubmit={(event: Event) => void assign(event, group.name)}
                    >
                      <div class="field grow">
                        <label for={`assign-${group.name}`}>Instance id</label>
                        <input
                          id={`assign-${group.name}`}
                          name="instance"
                          type="text"
                          list={`known-${group.name}`}
                          autocomplete="off"
                          maxlength={128}
                          required
                        />
                        <datalist id={`known-${group.name}`}>
                          {known
                            .filter((id) => !members.some((member) => member.id === id))
                            .map((id) => (
                              <option value={id}>{id}</option>
                            ))}
                        </datalist>
                      </div>
                      <button type="submit" class="button primary" disabled={busy}>
                        Put in group
                      </button>
                    </form>
                  )}
                </div>
              </li>
            ))}
          </ul>
        )}
      />
    </section>
  )
}
