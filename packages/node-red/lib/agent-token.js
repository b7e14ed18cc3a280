'use strict'

const crypto = require('node:crypto')

// The fleet agent's own token for its own Node-RED's admin API: random, made at start, never
// leaving this process; `adminAuth.tokens` answers it with the agent's user.

/** What applying (modules and flows) and reporting need, and nothing more. */
const AGENT_PERMISSIONS = ['nodes.read', 'nodes.write', 'flows.read', 'flows.write', 'settings.read']
/** The agent's user name in Node-RED: its audit messages name it, so they are told from people's. */
const AGENT_USER = '@flowadmin/fleet'

const sha256 = (text) => crypto.createHash('sha256').update(text).digest()

function createAgentToken() {
  const token = crypto.randomBytes(32).toString('base64url')
  const digest = sha256(token)
  return {
    token,
    /** Whether `candidate` is the agent's token (compared in constant time). */
    isAgentToken(candidate) {
      return typeof candidate === 'string' && crypto.timingSafeEqual(sha256(candidate), digest)
    },
    /** The user the agent's token stands for, a new object each time. */
    agentUser: () => ({ username: AGENT_USER, permissions: [...AGENT_PERMISSIONS] }),
  }
}

/** Whether a Node-RED log message is about a request of the agent. */
const isAgentMessage = (msg) => msg?.user?.username === AGENT_USER

module.exports = { createAgentToken, isAgentMessage, AGENT_PERMISSIONS, AGENT_USER }
