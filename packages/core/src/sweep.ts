import type { Clock, EnrolmentStore, SsoStore } from './ports/index.js'

/** A part that deletes up to `limit` of what has expired, and says how many. */
type Sweeps = (limit: number) => Promise<number>

export interface SweepDeps {
  tokens: { sweep: Sweeps }
  throttle: { sweep: Sweeps }
  sso: SsoStore
  signIn: { sweep: Sweeps }
  enrolments: EnrolmentStore
  clock: Clock
}

/**
 * Deletes expired tokens, ended throttle windows, logout tokens past their time, spent sign-in
 * challenges past their time, one-time codes that expired untraded and sign-ins awaiting a second
 * factor, and the fleet's enrolment tokens spent or expired, in batches of `batchSize`, at most
 * `maxBatches` of each, so one call stays bounded however much has piled up (`signIns` counts the
 * three kinds of sign-in).
 */
export function createSweep({ tokens, throttle, sso, signIn, enrolments, clock }: SweepDeps) {
  return async function sweep({ batchSize = 500, maxBatches = 20 } = {}): Promise<{
    tokens: number
    throttle: number
    logoutTokens: number
    signIns: number
    enrolments: number
  }> {
    const drain = async (step: Sweeps) => {
      let total = 0
      for (let i = 0; i < maxBatches; i++) {
        const removed = await step(batchSize)
        total += removed
        if (removed < batchSize) break
      }
      return total
    }
    return {
      tokens: await drain(tokens.sweep),
      throttle: await drain(throttle.sweep),
      logoutTokens: await drain((limit) => sso.deleteExpired(clock.now(), limit)),
      signIns:
        (await drain((limit) => sso.deleteExpiredSignIns(clock.now(), limit))) + (await drain(signIn.sweep)),
      enrolments: await drain((limit) => enrolments.deleteSpentEnrolments(clock.now(), limit)),
    }
  }
}
