// The stub flowadmin's instance identities: enrolment tokens, a credential per instance, its
// rotation and revocation, as flowadmin's `POST /fleet/enrol` and
// `POST /fleet/instances/{id}/credential` answer them.
import { randomBytes } from 'node:crypto'
import type { IncomingMessage, ServerResponse } from 'node:http'

/** Who a request's Basic credential is: the shared resource server, an instance, or nobody. */
export type Caller = { kind: 'shared' } | { kind: 'instance'; instance: string; clientId: string } | null

interface EnrolmentToken {
  uses: number
  expired: boolean
  instance?: string
}

interface InstanceCredential {
  instance: string
  secret: string
  /** The secret before a rotation, valid until the new one is first used. */
  previous: string | null
  revoked: boolean
  /** Its polls answer at once with `"rotate": true` until a new secret is first used. */
  rotateAsked: boolean
}

/** An answer the next enrolment gets instead of the contract's. */
export interface Refusal {
  status: number
  body: Record<string, unknown>
  retryAfter?: string
}

export interface Enrolment {
  token: string
  instance?: string
  nodeRedVersion?: string
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.writeHead(status, { 'Content-Type': 'application/json', ...headers })
  res.end(JSON.stringify(body))
}

export function createStubIdentity(resourceServer: string) {
  const tokens = new Map<string, EnrolmentToken>()
  const credentials = new Map<string, InstanceCredential>()
  const enrolments: Enrolment[] = []
  const refusals: Refusal[] = []
  let counter = 0
  /** Rotations answered 503 before the next is made. */
  let failingRotations = 0

  /** The caller of a Basic `clientId:secret` pair that is not the shared one. */
  function callerOf(clientId: string, secret: string): Caller {
    const record = credentials.get(clientId)
    if (record === undefined || record.revoked) return null
    if (record.secret === secret) {
      if (record.previous !== null) record.rotateAsked = false
      record.previous = null
      return { kind: 'instance', instance: record.instance, clientId }
    }
    if (record.previous === secret) return { kind: 'instance', instance: record.instance, clientId }
    return null
  }

  function enrol(res: ServerResponse, text: string) {
    let body: Enrolment
    try {
      body = JSON.parse(text) as Enrolment
    } catch {
      return json(res, 400, { code: 'invalid_request', message: 'not JSON' })
    }
    enrolments.push(body)
    const refusal = refusals.shift()
    if (refusal !== undefined) {
      return json(
        res,
        refusal.status,
        refusal.body,
        refusal.retryAfter === undefined ? {} : { 'Retry-After': refusal.retryAfter },
      )
    }
    const token = tokens.get(body.token)
    if (token === undefined || token.uses <= 0 || token.expired) {
      return json(res, 401, { code: 'invalid_enrolment', message: 'The enrolment token is not valid' })
    }
    if (token.instance !== undefined && body.instance !== undefined && body.instance !== token.instance) {
      return json(res, 400, { code: 'instance_mismatch', message: 'Another instance id' })
    }
    const instance = token.instance ?? body.instance ?? `nr-${++counter}`
    if ([...credentials.values()].some((record) => record.instance === instance && !record.revoked)) {
      return json(res, 409, { code: 'instance_conflict', message: 'Already enrolled' })
    }
    token.uses -= 1
    const clientId = `${resourceServer}/${instance}`
    const clientSecret = `fai_${randomBytes(24).toString('base64url')}`
    credentials.set(clientId, {
      instance,
      secret: clientSecret,
      previous: null,
      revoked: false,
      rotateAsked: false,
    })
    return json(res, 201, { instance, resourceServer, clientId, clientSecret })
  }

  function rotate(res: ServerResponse, caller: Caller, instance: string) {
    if (caller === null) return json(res, 401, { error: 'invalid_client' })
    if (caller.kind !== 'instance' || caller.instance !== instance) {
      return json(res, 403, { code: 'instance_mismatch', message: 'Not this instance' })
    }
    const record = credentials.get(caller.clientId)
    if (record === undefined) return json(res, 401, { error: 'invalid_client' })
    if (failingRotations > 0) {
      failingRotations -= 1
      return json(res, 503, { code: 'storage_unavailable', message: 'The store does not answer' })
    }
    const clientSecret = `fai_${randomBytes(24).toString('base64url')}`
    record.previous = record.secret
    record.secret = clientSecret
    return json(res, 200, { clientId: caller.clientId, clientSecret })
  }

  return {
    callerOf,
    /** Whether the instance is asked to rotate its credential. */
    rotateAsked: (instance: string) =>
      [...credentials.values()].some((record) => record.instance === instance && record.rotateAsked),
    /** Answers the identity routes; false for any other request. */
    handle(req: IncomingMessage, res: ServerResponse, path: string, text: string, caller: Caller) {
      if (req.method !== 'POST') return false
      if (path === '/fleet/enrol') {
        enrol(res, text)
        return true
      }
      const rotation = /^\/fleet\/instances\/([^/]+)\/credential$/.exec(path)
      if (rotation !== null) {
        rotate(res, caller, decodeURIComponent(rotation[1] ?? ''))
        return true
      }
      return false
    },
    /** The test's side. */
    api: {
      /** A new enrolment token, for `uses` instances, optionally naming the instance. */
      token(options: { uses?: number; instance?: string } = {}) {
        const token = `fae_${randomBytes(24).toString('base64url')}`
        tokens.set(token, { uses: options.uses ?? 1, expired: false, instance: options.instance })
        return token
      },
      expire(token: string) {
        const record = tokens.get(token)
        if (record !== undefined) record.expired = true
      },
      /** The enrolments received (their bodies). */
      enrolments,
      /** The next enrolments are answered these instead. */
      refuseNext(...next: Refusal[]) {
        refusals.push(...next)
      },
      /** Its next polls answer at once with `"rotate": true`, until it uses a new secret. */
      askRotate(instance: string) {
        for (const record of credentials.values()) if (record.instance === instance) record.rotateAsked = true
      },
      /** The next `count` rotations are answered 503. */
      failRotations(count: number) {
        failingRotations += count
      },
      revoke(instance: string) {
        for (const record of credentials.values()) if (record.instance === instance) record.revoked = true
      },
      /** The current secret of an instance's credential, and the one before a rotation. */
      secretsOf(instance: string) {
        const record = [...credentials.values()].find((each) => each.instance === instance)
        return { secret: record?.secret ?? null, previous: record?.previous ?? null }
      },
    },
  }
}

export type StubIdentity = ReturnType<typeof createStubIdentity>
