import type { Child } from 'hono/jsx'

/** The question before a removal, with "Yes, remove" (focused, so Enter answers it) and "Cancel". */
export function Confirm(props: { question: Child; onConfirm: () => void; onCancel: () => void }) {
  return (
    <div class="confirm">
      <p>{props.question}</p>
      <button type="button" class="button danger" autofocus onClick={props.onConfirm}>
        Yes, remove
      </button>
      <button type="button" class="button" onClick={props.onCancel}>
        Cancel
      </button>
    </div>
  )
}
