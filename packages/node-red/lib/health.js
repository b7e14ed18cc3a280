'use strict'

/**
 * @typedef {'unreachable' | 'unavailable' | 'client' | 'unexpected' | 'unenrolled'} Problem
 * unreachable: no answer (network, timeout); unavailable: 5xx or 429; client: the client id or
 * secret refused; unexpected: an answer outside the contract (a wrong url, a redirect); unenrolled:
 * this instance has no credential yet (it enrols).
 */

/**
 * Whether flowadmin answers as it should, told once per change: the first failure of an outage
 * logs one line and the first success after it one more; the thousands of requests in between log
 * nothing. A result counts only when its request began after the last change, so a slow request
 * from before an outage, or from before the recovery, cannot flip the state back and forth.
 *
 * @param {(line: string) => void} log
 * @param {() => void} [recovered] called when a problem ends (after its line is logged)
 */
function createHealth(log, recovered = () => {}) {
  /** @type {Problem | null} */
  let problem = null
  let recoveredLine = ''
  let begun = 0
  let changedAt = 0

  return {
    /** A ticket for one request to flowadmin, to hand to ok() or fail() when it ends. */
    begin() {
      begun += 1
      return begun
    },
    /** The request got the answer it should: ends a problem, if any. */
    ok(ticket) {
      if (problem === null || ticket <= changedAt) return
      problem = null
      changedAt = begun
      log(recoveredLine)
      recovered()
    },
    /**
     * The request failed with this problem: logs `line` when it is a new problem; `recovered` is
     * what to log when it ends.
     * @param {number} ticket
     * @param {Problem} kind
     * @param {string} line
     * @param {string} recovered
     */
    fail(ticket, kind, line, recovered) {
      if (problem === kind || ticket <= changedAt) return
      problem = kind
      recoveredLine = recovered
      changedAt = begun
      log(line)
    },
  }
}

module.exports = { createHealth }
