/** A time as the person reads it (date and minute, in their locale), or `otherwise` when there is none. */
export const when = (time: string | null, otherwise: string) =>
  time === null
    ? otherwise
    : new Date(time).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })

/** A time as `when` reads it, marked up with its machine-readable value; `otherwise` when there is none. */
export function Time(props: { at: string | null; otherwise?: string }) {
  return props.at === null ? (props.otherwise ?? '') : <time datetime={props.at}>{when(props.at, '')}</time>
}
