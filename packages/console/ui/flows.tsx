import { useEffect, useRef, useState } from 'hono/jsx/dom'
import { canRead, canReadFlows, canWriteFlows, type Notice, SessionEnded, type User } from './api.js'
import { listGroups } from './api-access.js'
import {
  getRollout,
  groupFlows,
  listRollouts,
  listSnapshots,
  listVariables,
  type Rollout,
  type RolloutView,
  type Snapshot,
  unfinished,
} from './api-flows.js'
import { Feedback, useFeedback } from './feedback.js'
import { GroupCard } from './flows-groups.js'
import { Rollouts } from './flows-rollouts.js'
import { type Change, type GroupEntry, namer, rightsOf } from './flows-shared.js'
import { Snapshots } from './flows-snapshots.js'

/** Milliseconds between the view's refreshes while a rollout is under way. */
const POLL_MS = 2000

/** How many of the newest rollouts are shown with their instances' outcomes. */
const SHOWN_ROLLOUTS = 10

/** The scopes that are no group's: a grant there reaches every group, or none. */
const NOT_GROUPS = new Set(['everywhere', 'flowadmin'])

/** Everything the view shows; null snapshots and rollouts: the caller may not read them. */
interface Loaded {
  snapshots: Snapshot[] | null
  rollouts: Rollout[] | null
  details: RolloutView[]
  groups: GroupEntry[]
}

/**
 * Fleet mode: the snapshots of flows (listed, downloaded, uploaded), each group's flows (its mode,
 * target, what a rollback goes back to, a rollout or rollback, each instance's deployed rollout,
 * rev and drift, its variables) and the rollouts, newest first, with their instances' outcomes.
 * Refreshed every POLL_MS while a rollout is pending or running, and on its button.
 */
export function Flows(props: {
  user: User
  scopes: Record<string, string[]> | null
  onSessionEnded: (notice: Notice) => void
}) {
  const [loaded, setLoaded] = useState<Loaded | null>(null)
  const { alert, status, guard, setStatus } = useFeedback(props.onSessionEnded)
  const rights = rightsOf(props.user, props.scopes)
  const overall = canReadFlows(rights.flowadmin)
  const underWay = useRef(false)
  const queue = useRef<Promise<void>>(Promise.resolve())
  const inFlight = useRef(0)

  /** The groups whose flows the caller may read: those the Groups view lists, else their grants'. */
  const groupNames = async (): Promise<string[]> => {
    const listed =
      props.scopes === null || canRead(rights.flowadmin)
        ? (await listGroups()).map(({ name }) => name)
        : Object.keys(props.scopes).filter((scope) => !NOT_GROUPS.has(scope))
    return listed.filter((group) => canReadFlows(rights.at(group)))
  }

  const fetchAll = async (): Promise<Loaded> => {
    const names = await groupNames()
    // Snapshots and the rollouts of the groups one may read: with flows.read on flowadmin or a group.
    const readsAny = overall || names.length > 0
    const [snapshots, rollouts] = await Promise.all([
      readsAny ? listSnapshots() : null,
      readsAny ? listRollouts() : null,
    ])
    const [details, groups] = await Promise.all([
      Promise.all((rollouts ?? []).slice(0, SHOWN_ROLLOUTS).map(({ id }) => getRollout(id))),
      Promise.all(
        names.map(async (group) => {
          const [flows, variables] = await Promise.all([groupFlows(group), listVariables(group)])
          return { flows, variables }
        }),
      ),
    ])
    return { snapshots, rollouts, details, groups }
  }

  /**
   * Loads everything the view shows. `polled`: a refresh of its own, which leaves the alert as it
   * is (a refusal stays said) and a failure unsaid (the next refresh tries again).
   */
  const loadOnce = async (announce: boolean, polled: boolean): Promise<void> => {
    let got: Loaded | undefined
    if (!polled) got = await guard(fetchAll)
    else {
      try {
        got = await fetchAll()
      } catch (error) {
        if (error instanceof SessionEnded) props.onSessionEnded('session_ended')
      }
    }
    if (got === undefined) return
    setLoaded(got)
    underWay.current =
      (got.rollouts ?? []).some(unfinished) ||
      got.groups.some(({ flows }) => flows.latest !== null && unfinished(flows.latest))
    if (announce) setStatus('Flows refreshed.')
  }

  /** Loads the view, one load at a time: one asked for meanwhile (after a change) runs next. */
  const load = (announce: boolean, polled = false): Promise<void> => {
    inFlight.current += 1
    const next = queue.current
      .then(() => loadOnce(announce, polled))
      .finally(() => {
        inFlight.current -= 1
      })
    queue.current = next
    return next
  }

  useEffect(() => {
    void load(false)
    const timer = setInterval(() => {
      if (underWay.current && inFlight.current === 0 && !document.hidden) void load(false, true)
    }, POLL_MS)
    return () => clearInterval(timer)
  }, [])

  /** Runs a change, loads the view again and says what was done; false: it was refused. */
  const change: Change = async (work, done) => {
    // Wrapped: a change whose answer is empty (a removal) succeeded too.
    const changed = await guard(async () => ({ answer: await work() }))
    if (changed === undefined) return false
    await load(false)
    setStatus(typeof done === 'string' ? done : done(changed.answer))
    return true
  }

  const name = namer(loaded?.snapshots ?? null)
  const rollouts = new Map<string, Rollout>()
  for (const rollout of [
    ...(loaded?.rollouts ?? []),
    ...(loaded?.groups ?? []).flatMap(({ flows }) => [flows.target, flows.latest]),
  ]) {
    if (rollout) rollouts.set(rollout.id, rollout)
  }

  return (
    <section aria-labelledby="flows-title" class="modules">
      <div class="section-head">
        <h2 id="flows-title">Flows</h2>
        <button type="button" class="button" onClick={() => void load(true)}>
          Refresh
        </button>
      </div>
      <p class="muted hint">
        Snapshots of flows, rolled out to the groups of instances: each instance's helper installs the modules
        a snapshot needs, deploys its flows with the group's variables and says how it went. Refreshed every
        few seconds while a rollout is under way.
      </p>
      <Feedback alert={alert} status={status} />
      {loaded === null && alert === null && <p class="muted">Loading flows…</p>}
      {loaded !== null && (
        <>
          {loaded.snapshots === null ? (
            <p class="muted">Snapshots and rollouts need flows.read on flowadmin or on a group.</p>
          ) : (
            <Snapshots
              snapshots={loaded.snapshots}
              writable={canWriteFlows(rights.flowadmin)}
              guard={guard}
              change={change}
              setStatus={setStatus}
            />
          )}
          <section aria-labelledby="flows-groups-title" class="flows-part">
            <h3 id="flows-groups-title">Groups</h3>
            {loaded.groups.length === 0 ? (
              <p class="muted">
                No group whose flows you may read: the settings declare them in fleet.groups.
              </p>
            ) : (
              <ul class="cards" aria-label="Groups' flows">
                {loaded.groups.map((entry) => (
                  <GroupCard
                    key={entry.flows.group}
                    entry={entry}
                    snapshots={loaded.snapshots ?? []}
                    rollouts={rollouts}
                    name={name}
                    writable={canWriteFlows(rights.at(entry.flows.group))}
                    change={change}
                  />
                ))}
              </ul>
            )}
          </section>
          {loaded.rollouts !== null && (
            <Rollouts total={loaded.rollouts.length} details={loaded.details} name={name} />
          )}
        </>
      )}
    </section>
  )
}
