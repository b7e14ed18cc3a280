import { type ChannelWatch, type ChannelWatchOptions, watchChannel } from './channel-watch.js'
import { FLEET_CHANNEL } from './fleet-state.js'
import type { HeardCache } from './heard-cache.js'

/** What a fleet watch tells its owner. */
export interface FleetWatchHandlers {
  /** The desired state reached this revision (at any instance sharing the database). */
  revision(revision: number): void
  /** An instance's report was saved (at any instance sharing the database). */
  report(id: string): void
  /** Listening (re)started: what was announced while no connection listened is lost. */
  listening(): void
}

/**
 * The instances' lookups a fleet watch keeps true, by the kind their changes are announced as
 * (`credential:<instance>`, `ask:<instance>`): each is forgotten when announced, and kept only
 * while the channel is heard.
 */
export type FleetLookups = Readonly<Record<'credential' | 'ask', HeardCache<unknown>>>

/**
 * Listens for the fleet's announcements (FLEET_CHANNEL) on a connection of its own, which is
 * dropped and opened again, with backoff, when it errs, ends or stops answering the heartbeat.
 */
export function watchFleet(
  config: Parameters<typeof watchChannel>[0],
  handlers: FleetWatchHandlers,
  options: ChannelWatchOptions = {},
  lookups?: FleetLookups,
): ChannelWatch {
  const kept = lookups === undefined ? [] : Object.values(lookups)
  return watchChannel(
    config,
    FLEET_CHANNEL,
    {
      notified(payload) {
        const colon = payload.indexOf(':')
        const [kind, value] = [payload.slice(0, colon), payload.slice(colon + 1)]
        if (kind === 'revision' && /^\d+$/.test(value)) handlers.revision(Number(value))
        else if (kind === 'report') handlers.report(value)
        else if (kind === 'credential' || kind === 'ask') lookups?.[kind].forget(value)
      },
      listening: () => {
        for (const cache of kept) cache.listening()
        handlers.listening()
      },
      lost: () => {
        for (const cache of kept) cache.lost()
      },
      beat: () => {
        const now = Date.now()
        for (const cache of kept) cache.beat(now)
      },
      alive: () => {
        for (const cache of kept) cache.alive()
      },
    },
    'fleet changes',
    options,
  )
}
