/** An on/off switch: a button with role="switch", named by `labelledBy` or `label`. */
export function Switch(props: {
  checked: boolean
  labelledBy?: string
  label?: string
  disabled: boolean
  busy: boolean
  onToggle: () => void
}) {
  return (
    <button
      type="button"
      role="switch"
      class="switch"
      aria-checked={props.checked ? 'true' : 'false'}
      aria-labelledby={props.labelledBy}
      aria-label={props.label}
      aria-busy={props.busy ? 'true' : 'false'}
      disabled={props.disabled}
      onClick={() => {
        if (!props.busy) props.onToggle()
      }}
    >
      <span class="track" aria-hidden="true">
        <span class="thumb" />
      </span>
      <span class="state" aria-hidden="true">
        {props.busy ? '…' : props.checked ? 'On' : 'Off'}
      </span>
    </button>
  )
}
