import { useState } from 'hono/jsx/dom'
import { SessionEnded } from './api.js'

/**
 * A screen's alert and status line, and `guard`, which runs a call: a lost session goes back to
 * the login form, any other failure becomes the alert.
 */
export function useFeedback(onSessionEnded: (message: string) => void) {
  const [alert, setAlert] = useState<string | null>(null)
  const [status, setStatus] = useState('')
  const guard = async <T,>(work: () => Promise<T>): Promise<T | undefined> => {
    setAlert(null)
    try {
      return await work()
    } catch (error) {
      if (error instanceof SessionEnded) onSessionEnded(error.message)
      else setAlert(error instanceof Error ? error.message : String(error))
      return undefined
    }
  }
  return { alert, status, setStatus, guard }
}

/** The alert (role="alert") and the status line screen readers announce (role="status"). */
export function Feedback(props: { alert: string | null; status: string }) {
  return (
    <div class="live">
      {props.alert !== null && (
        <p class="error" role="alert">
          {props.alert}
        </p>
      )}
      <p class="sr-only" role="status">
        {props.status}
      </p>
    </div>
  )
}
