'use strict'

// The flows this instance runs, sent to flowadmin when someone asked for them there (a poll's
// answer says `snapshot: {name}`): read from its own admin API (GET /flows) and sent under that
// name, one ask at a time. Never throws: a failure is a line in the log, and the next poll that
// still carries the ask tries again; but flows flowadmin refused (a 4xx but 408 and 429) are
// not sent again under that name until a poll carries no ask.

const { firstLine } = require('./text')

const short = (text) => firstLine(text, 300)

/**
 * `flows()` reads the deployed flows (an array, or null); `send(body)` posts them to flowadmin and
 * resolves to `{status, body}` (status 0: no answer, which the caller's own log tells).
 */
function createFlowsSender({ flows, send, log }) {
  let busy = false
  /** The name flowadmin refused flows under, while polls still carry it; else null. */
  let refused = null

  async function sendOnce(name) {
    const deployed = await flows()
    if (deployed === null) {
      log(
        `fleet: the flows asked for as ${name} cannot be read from this Node-RED; tried again at the next poll`,
      )
      return
    }
    const answer = await send(JSON.stringify({ name, flows: deployed }))
    if (answer.status === 201) {
      log(`fleet: the flows this instance runs are kept at flowadmin as a snapshot of ${name}`)
    } else if (
      answer.status >= 400 &&
      answer.status < 500 &&
      answer.status !== 408 &&
      answer.status !== 429
    ) {
      // Sent again, they would be refused again (409: sent already, or asked again under another
      // name); a timeout or too many requests (408, 429) are tried again at the next poll.
      refused = name
      if (answer.status !== 409) {
        const why = short(answer.body?.message)
        log(
          `fleet: flowadmin refused the flows asked for as ${name} (HTTP ${answer.status}${why ? `: ${why}` : ''}); not sent again`,
        )
      }
    }
  }

  return {
    /**
     * A poll's answer: the name it asks the flows for, or null when it asks for none. Sends them
     * under that name, unless a sending is under way or flowadmin refused that name. Resolves
     * when done; never rejects.
     */
    asked(name) {
      if (name !== refused) refused = null
      if (name === null || name === refused || busy) return Promise.resolve()
      busy = true
      return sendOnce(name)
        .catch((error) => {
          log(`fleet: the flows asked for as ${name} were not sent (${short(error?.message ?? error)})`)
        })
        .finally(() => {
          busy = false
        })
    },
  }
}

module.exports = { createFlowsSender }
