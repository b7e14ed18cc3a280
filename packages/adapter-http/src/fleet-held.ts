import type { WaitEnd } from './fleet-changes.js'

// A poll held here until its answer, as one object: it ends early when its connection closes
// (`lost`), or when another poll of its instance or a revocation ends it (`end`). It is what the
// poll's waits listen to, so that a held poll costs no AbortController, no combined signal and no
// closure besides the one Node's response calls when it closes.

/**
 * The part of Node's `ServerResponse` that tells a held poll its connection closed. @hono/node-server
 * hands the app the response it answers on (`c.env.outgoing`): listening there skips the request's
 * AbortSignal, which it builds on first use.
 */
interface NodeOutgoing {
  readonly closed: boolean
  readonly writableFinished: boolean
  once(event: 'close', listener: () => void): unknown
  off(event: 'close', listener: () => void): unknown
}

/** The Node response behind a Hono context's `env`, when the app runs on @hono/node-server. */
function nodeOutgoingOf(env: unknown): NodeOutgoing | null {
  const outgoing = (env as { outgoing?: Partial<NodeOutgoing> } | null | undefined)?.outgoing
  if (typeof outgoing?.once !== 'function' || typeof outgoing.off !== 'function') return null
  if (typeof outgoing.closed !== 'boolean' || typeof outgoing.writableFinished !== 'boolean') return null
  return outgoing as NodeOutgoing
}

export class HeldPoll implements WaitEnd {
  /** Its connection closed before its answer. */
  lost = false
  /** Another poll of its instance, or a revocation, ended it. */
  ended = false
  /** The wait listening now (one at a time). */
  private listener: { handleEvent(): void } | null = null
  /** What tells it that its connection closed: Node's response, or the web request's signal. */
  private readonly outgoing: NodeOutgoing | null
  private readonly signal: AbortSignal | null = null
  private readonly closed = () => this.lose()

  /**
   * Held on the request of `env` (Node's response, through @hono/node-server), else on `signal`
   * (the web request's, read only when there is no Node response).
   */
  constructor(env: unknown, signal: () => AbortSignal) {
    this.outgoing = nodeOutgoingOf(env)
    if (this.outgoing !== null) {
      // Nothing was written yet: a response closed now closed before its answer.
      if (this.outgoing.closed && !this.outgoing.writableFinished) this.lost = true
      else this.outgoing.once('close', this.closed)
    } else {
      this.signal = signal()
      if (this.signal.aborted) this.lost = true
      else this.signal.addEventListener('abort', this)
    }
  }

  /** Ended by its connection or by another: its wait ends at once. */
  get aborted(): boolean {
    return this.lost || this.ended
  }

  /** Another poll of its instance came, or its credential was revoked. */
  end(): void {
    this.ended = true
    this.listener?.handleEvent()
  }

  /** The request's signal aborted: its connection closed. */
  handleEvent(): void {
    this.lose()
  }

  addEventListener(_type: 'abort', listener: { handleEvent(): void }): void {
    this.listener = listener
  }

  removeEventListener(_type: 'abort', listener: { handleEvent(): void }): void {
    if (this.listener === listener) this.listener = null
  }

  /** Its answer is being made: its connection no longer concerns it. */
  release(): void {
    this.outgoing?.off('close', this.closed)
    this.signal?.removeEventListener('abort', this)
  }

  private lose() {
    this.lost = true
    this.listener?.handleEvent()
  }
}
