// A fleet of lean agents in a few child processes (fleet-agents-process.mjs): each agent reports
// once, then holds polls of the desired state as the helper does. The parent reads when each agent
// received a new version, and the processes' CPU time.
import { fork } from 'node:child_process'
import { track } from './cleanup.mjs'

const CHILD = new URL('fleet-agents-process.mjs', import.meta.url).pathname
/** Agents in one child process at most. */
const PER_PROCESS = 250
const JOIN_DEADLINE_MS = 120_000

/** The next message of `type` from `child`; rejects on a `failed` message, an exit, or after `ms`. */
function nextMessage(child, type, ms) {
  return new Promise((resolve, reject) => {
    const done = () => {
      clearTimeout(timer)
      child.off('message', onMessage)
      child.off('exit', onExit)
    }
    const onMessage = (message) => {
      if (message.type === type) {
        done()
        resolve(message)
      } else if (message.type === 'failed') {
        done()
        reject(new Error(message.message))
      }
    }
    const onExit = (code, signal) => {
      done()
      reject(new Error(`an agents' process exited (${signal ?? code})`))
    }
    const timer = setTimeout(() => {
      done()
      reject(new Error(`an agents' process sent no ${type} within ${ms} ms`))
    }, ms)
    child.on('message', onMessage)
    child.once('exit', onExit)
  })
}

/** Sends `message` to `child` and resolves with its answer of `type` (see nextMessage). */
function ask(child, message, type, ms) {
  const answer = nextMessage(child, type, ms)
  try {
    child.send(message)
  } catch (error) {
    answer.catch(() => {})
    return Promise.reject(new Error(`an agents' process cannot be asked (${error.message})`))
  }
  return answer
}

/**
 * Starts `count` agents named `${prefix}-<n>`, agent n polling `servers[n % servers.length]` (each
 * `{port}`), authenticated with `authorization` (the resource server's HTTP Basic) and reporting
 * `report` when it joins; resolves once every one holds a poll, with the versions they received.
 */
export async function startAgents({ servers, count, prefix, authorization, report }) {
  const processes = Math.ceil(count / PER_PROCESS)
  const children = Array.from({ length: processes }, () =>
    track(fork(CHILD, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })),
  )
  const stop = async () => {
    await Promise.all(
      children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return
        const exited = new Promise((resolve) => child.once('exit', resolve))
        try {
          child.send({ type: 'stop' })
        } catch {
          child.kill('SIGKILL')
        }
        const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
        await exited
        clearTimeout(timer)
      }),
    )
  }
  try {
    const joined = await Promise.all(
      children.map((child, c) => {
        const agents = []
        for (let n = c; n < count; n += processes) {
          agents.push({ id: `${prefix}-${n}`, port: servers[n % servers.length].port })
        }
        return ask(child, { type: 'join', agents, authorization, report }, 'joined', JOIN_DEADLINE_MS)
      }),
    )
    return {
      pids: children.map((child) => child.pid),
      versions: [...new Set(joined.flatMap((message) => message.versions))],
      /** The longest hold the agents were told (seconds). */
      hold: Math.max(...joined.map((message) => message.hold)),
      /**
       * Resolves once every agent received a version other than `old` after `after` (ms on the
       * monotonic clock, see fleet-agents-process.mjs), or `deadlineMs` passed: the arrival times,
       * the versions received, and how many agents received none.
       */
      async reach({ after, old, deadlineMs }) {
        const deadline = Number(process.hrtime.bigint()) / 1e6 + deadlineMs
        const answers = await Promise.all(
          children.map((child) =>
            ask(child, { type: 'reach', after, old, deadline }, 'reached', deadlineMs + 10_000),
          ),
        )
        return {
          times: answers.flatMap((answer) => answer.times),
          versions: [...new Set(answers.flatMap((answer) => answer.versions))],
          missing: answers.reduce((sum, answer) => sum + answer.missing, 0),
        }
      },
      /** Polls sent so far, their answers by status, and the requests that got none (and why). */
      async stats() {
        const all = await Promise.all(children.map((child) => ask(child, { type: 'stats' }, 'stats', 10_000)))
        const statuses = {}
        const failures = {}
        for (const one of all) {
          for (const [code, n] of Object.entries(one.statuses)) statuses[code] = (statuses[code] ?? 0) + n
          for (const [why, n] of Object.entries(one.unanswered)) failures[why] = (failures[why] ?? 0) + n
        }
        return {
          polls: all.reduce((sum, one) => sum + one.polls, 0),
          statuses,
          errors: all.reduce((sum, one) => sum + one.errors, 0),
          failures,
        }
      },
      stop,
    }
  } catch (error) {
    await stop()
    throw error
  }
}
