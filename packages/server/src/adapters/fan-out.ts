import type { EventSink } from '@flowadmin/core'

/** Sends each event to every sink; one that throws does not keep the others from it. */
export function fanOut(...sinks: EventSink[]): EventSink {
  return {
    emit(event) {
      for (const sink of sinks) {
        try {
          sink.emit(event)
        } catch {
          // A sink must not throw into the request that caused the event.
        }
      }
    },
  }
}
