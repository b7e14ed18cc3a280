import type { Child } from 'hono/jsx'
import type { Notice } from './api.js'
import { Feedback, useRefreshedList } from './feedback.js'

/** A term and its value, one line of a card's facts. */
export type Fact = [term: string, value: Child]

/**
 * What a view shows of a list it loads: "Loading …" until the first answer (unless that failed,
 * which the view's alert says), `empty` when there is nothing, else `show(items)`.
 */
export function Listed<T>(props: {
  items: T[] | null
  alert: string | null
  loading: string
  empty: string
  show: (items: T[]) => Child
}) {
  const { items } = props
  if (items === null) return props.alert === null ? <p class="muted">{props.loading}</p> : null
  return items.length === 0 ? <p class="muted">{props.empty}</p> : props.show(items)
}

/** One item as a card: its heading with tags beside it, its facts below (null: a fact it lacks), and `actions` on the side. */
export function ItemCard(props: { heading: string; tags?: Child; facts: (Fact | null)[]; actions?: Child }) {
  return (
    <li class="card token">
      <div class="token-main">
        <div class="title">
          <h3>{props.heading}</h3>
          {props.tags}
        </div>
        <dl class="facts">
          {props.facts
            .filter((fact) => fact !== null)
            .map(([term, value]) => (
              <>
                <dt>{term}</dt>
                <dd>{value}</dd>
              </>
            ))}
        </dl>
      </div>
      {props.actions}
    </li>
  )
}

/**
 * A view of one list the API gives (one call, again on Refresh): its heading, what it is, the
 * alert and status line, and a card per item. `label` names the list ("Instances"), its loading
 * line and the status after a refresh.
 */
export function ListView<T>(props: {
  id: string
  title: string
  hint: Child
  label: string
  empty: string
  load: () => Promise<T[]>
  /** An item's card: its id is the heading. */
  card: (item: T) => { id: string; tags?: Child; facts: Fact[] }
  onSessionEnded: (notice: Notice) => void
}) {
  const { items, refresh, alert, status } = useRefreshedList<T>(
    props.load,
    `${props.label} refreshed.`,
    props.onSessionEnded,
  )
  return (
    <section aria-labelledby={`${props.id}-title`} class="modules">
      <div class="section-head">
        <h2 id={`${props.id}-title`}>{props.title}</h2>
        <button type="button" class="button" onClick={() => void refresh(true)}>
          Refresh
        </button>
      </div>
      <p class="muted hint">{props.hint}</p>
      <Feedback alert={alert} status={status} />
      <Listed
        items={items}
        alert={alert}
        loading={`Loading ${props.label.toLowerCase()}…`}
        empty={props.empty}
        show={(listed) => (
          <ul class="cards" aria-label={props.label}>
            {listed.map((item) => {
              const card = props.card(item)
              return <ItemCard key={card.id} heading={card.id} tags={card.tags} facts={card.facts} />
            })}
          </ul>
        )}
      />
    </section>
  )
}
