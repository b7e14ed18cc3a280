'use strict'

// Pauses of the fleet agent's loops: never zero, jittered so that a fleet's agents do not move
// in step, and cut short when the agent stops.

/** The pause after a round that went well: 250 to 750 ms. */
const MIN_PAUSE_MS = 250
const PAUSE_SPREAD_MS = 500
/** The longest pause after failures in a row. */
const MAX_BACKOFF_MS = 30_000
const FIRST_BACKOFF_MS = 1000

/** The pause between two rounds: 250 to 750 ms, never zero. */
function roundPause(random = Math.random) {
  return MIN_PAUSE_MS + Math.floor(random() * PAUSE_SPREAD_MS)
}

/**
 * The pause after `failures` failures in a row (1 or more): full jitter, uniform between 250 ms
 * and 1 s, 2 s, 4 s … up to 30 s.
 */
function backoff(failures, random = Math.random) {
  const ceiling = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** Math.min(Math.max(failures, 1) - 1, 16))
  return Math.max(MIN_PAUSE_MS, Math.floor(random() * ceiling))
}

/** The stop of a running part: its pauses end early, and its requests are aborted by `signal`. */
function createStopper() {
  const controller = new AbortController()
  const wakers = new Set()
  return {
    get stopped() {
      return controller.signal.aborted
    },
    /** Aborted at stop: given to the requests of the part. */
    signal: controller.signal,
    stop() {
      controller.abort()
      for (const wake of [...wakers]) wake()
    },
    /** Resolves after `ms`, or at once when stopped. */
    sleep(ms) {
      if (controller.signal.aborted) return Promise.resolve()
      return new Promise((resolve) => {
        const wake = () => {
          clearTimeout(timer)
          wakers.delete(wake)
          resolve()
        }
        const timer = setTimeout(wake, ms)
        timer.unref?.()
        wakers.add(wake)
      })
    },
  }
}

/** A line logged once, not at every retry; again once `clear()` said the trouble ended. */
function onceEach(log) {
  let last = null
  return {
    say(line) {
      if (line !== last) log(line)
      last = line
    },
    clear() {
      last = null
    },
  }
}

module.exports = { backoff, createStopper, onceEach, roundPause, MAX_BACKOFF_MS, MIN_PAUSE_MS }
