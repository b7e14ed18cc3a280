// The fleet's part of the API the console calls: its instances, enrolment tokens, and the
// resource servers its instances authenticate as.
import { json, jsonBody } from './api.js'

/** A Node-RED instance of the fleet, as `GET /fleet/instances` lists it. */
export interface FleetInstance {
  id: string
  resourceServer: string
  nodeRedVersion: string | null
  connected: boolean
  lastSeen: string
  lastReport: string | null
  applied: string | null
  modules: number
  /** `by` and `at` (ms since the epoch) for a hand change. */
  drift: Array<{ module: string; reason: string; message?: string; by?: string | null; at?: number }>
  revoked: boolean
  /** Its enrolment; null: it uses its resource server's shared secret. */
  enrolment: { at: string; by: string | null; rotatedAt: string | null; revokedAt: string | null } | null
}

/** The fleet's instances with their drift (fleet mode; needs `nodes.read`). */
export const listFleetInstances = (): Promise<FleetInstance[]> => json('fleet/instances')

/** A new enrolment token: `token` is in this answer only. */
export interface CreatedEnrolment {
  id: string
  token: string
  resourceServer: string
  uses: number
  expiresAt: string
  instance: string | null
}

/** Makes an enrolment token for instances of `resourceServer` (needs `nodes.write` and `*`). */
export const createEnrolment = (request: {
  resourceServer: string
  uses: number
  expiresIn: number
  instance: string | null
}): Promise<CreatedEnrolment> => json('fleet/enrolments', { method: 'POST', ...jsonBody(request) })

/** A resource server of `adminAuth.resourceServers`, and when it last called this instance. */
export interface ResourceServer {
  id: string
  /** null: not since the server's start or last reload. */
  last_call_at: string | null
  /** What the settings hold; absent from servers before it was told. */
  secret?: 'digest' | 'password_hash'
}

/** The configured resource servers, by id, with their last call (needs `*`). */
export const listResourceServers = async (): Promise<ResourceServer[]> =>
  (await json<{ resource_servers: ResourceServer[] }>('auth/resource-servers')).resource_servers
