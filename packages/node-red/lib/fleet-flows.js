'use strict'

// The flows this instance runs, sent to flowadmin when someone asked for them there (a poll's
// answer says `snapshot: {name}`): read from its own admin API (GET /flows) and sent under that
// name, one ask at a time. Never throws: a failure is a line in the log, and the next poll that
// still carries the ask tries again.

const short = (text) =>
  String(text ?? '')
    .split('\n')
    .find((line) => line.trim() !== '')
    ?.trim()
    .slice(0, 300) ?? ''

/**
 * `flows()` reads the deployed flows (an array, or null); `send(body)` posts them to flowadmin and
 * resolves to `{status, body}` (status 0: no answer, which the caller's own log tells).
 */
function createFlowsSender({ flows, send, log }) {
  let busy = false

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
    } else if (answer.status !== 0 && answer.status !== 409) {
      // 409: sent already (a poll that went out before), or asked again under another name.
      const why = short(answer.body?.message)
      log(
        `fleet: flowadmin refused the flows asked for as ${name} (HTTP ${answer.status}${why ? `: ${why}` : ''})`,
      )
    }
  }

  return {
    /** Sends the flows under `name`, unless a sending is under way. */
    send(name) {
      if (busy) return
      busy = true
      sendOnce(name)
        .catch((error) =>
          log(`fleet: the flows asked for as ${name} were not sent (${short(error?.message ?? error)})`),
        )
        .finally(() => {
          busy = false
        })
    },
  }
}

module.exports = { createFlowsSender }
