import { useCallback, useEffect, useState } from 'hono/jsx/dom'
import { type Notice, SessionEnded } from './api.js'

/**
 * A screen's alert and status line, and `guard`, which runs a call: a lost session goes back to
 * the login form, any other failure becomes the alert.
 */
export function useFeedback(onSessionEnded: (notice: Notice) => void) {
  const [alert, setAlert] = useState<string | null>(null)
  const [status, setStatus] = useState('')
  const guard = async <T,>(work: () => Promise<T>): Promise<T | undefined> => {
    setAlert(null)
    try {
      return await work()
    } catch (error) {
      if (error instanceof SessionEnded) onSessionEnded('session_ended')
      else setAlert(error instanceof Error ? error.message : String(error))
      return undefined
    }
  }
  return { alert, status, setStatus, guard }
}

/**
 * A list a screen loads on opening and again on its Refresh button, which then says `refreshed` in
 * the status line; with the screen's feedback (see useFeedback). null until the first answer.
 */
export function useRefreshedList<T>(
  load: () => Promise<T[]>,
  refreshed: string,
  onSessionEnded: (notice: Notice) => void,
) {
  const [items, setItems] = useState<T[] | null>(null)
  const feedback = useFeedback(onSessionEnded)
  const refresh = useCallback(async (announce: boolean) => {
    const listed = await feedback.guard(load)
    if (listed === undefined) return
    setItems(listed)
    if (announce) feedback.setStatus(refreshed)
  }, [])
  useEffect(() => {
    void refresh(false)
  }, [])
  return { items, refresh, ...feedback }
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
