import type { Child } from 'hono/jsx'

/**
 * The question before a removal, with "Yes, remove" (focused, so Enter answers it) and "Cancel";
 * `yes` names another act ("Yes, roll back").
 */
export function Confirm(props: {
  question: Child
  yes?: string
  onConfirm: () => void
  onCancel: () => void
}) {
  return (
    <div class="confirm">
      <p>{props.question}</p>
      <button type="button" class="button danger" autofocus onClick={props.onConfirm}>
        {props.yes ?? 'Yes, remove'}
      </button>
      <button type="button" class="button" onClick={props.onCancel}>
        Cancel
      </button>
    </div>
  )
}
