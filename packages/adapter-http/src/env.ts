import type { Core, Principal } from '@flowadmin/core'
import type { Context } from 'hono'
import type { FleetSignals } from './fleet-signals.js'

/** Per-request values set by the bearer middleware. */
export type AppEnv = {
  Variables: {
    principal: Principal
    address: string
  }
}

/** What the route factories need, resolved from the options once. */
export interface RouteDeps {
  core: Core
  version: string
  /** Normalised: '' or '/something' without a trailing slash. */
  basePath: string
  clientAddress: (c: Context) => string
  maxBodyBytes: number
  /** Whether `GET /metrics` is served (the OpenAPI document lists it then). */
  metrics: boolean
  maxUploadBytes: number
  /** The single sign-on redirect URI from the settings; undefined: the origin the browser used. */
  ssoRedirectUri?: string | undefined
  /** The sign-in page's passkey script, when one is served (see HttpAppOptions.signInScript). */
  signInScript?: string | undefined
  /** Fleet mode: how polls and changes' answers learn of changes and reports, and the leases. */
  fleet?: FleetSignals | undefined
}
