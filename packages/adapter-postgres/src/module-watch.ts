import { messageOf } from '@flowadmin/core'
import type pg from 'pg'
import { type ChannelWatch, type ChannelWatchOptions, watchChannel } from './channel-watch.js'
import { MODULE_CHANNEL } from './module-store.js'

export type ModuleWatchOptions = ChannelWatchOptions

/** A running watch; `close()` stops it and its connection. */
export type ModuleWatch = ChannelWatch

/**
 * Listens for module announcements on a connection of its own. `onChange(name)` runs for each
 * announced module, and `onChange(null)` each time listening (re)starts: notifications sent while
 * no connection listened are lost, so the receiver then checks every module. A connection that
 * errs, ends or stops answering the heartbeat is dropped and opened again, with backoff.
 */
export function watchModules(
  config: pg.ClientConfig,
  onChange: (module: string | null) => Promise<void> | void,
  options: ModuleWatchOptions = {},
): ModuleWatch {
  const report = options.onError ?? (() => {})
  const deliver = (module: string | null) => {
    try {
      Promise.resolve(onChange(module)).catch((error: unknown) =>
        report(`loading announced module changes failed: ${messageOf(error)}`),
      )
    } catch (error) {
      report(`loading announced module changes failed: ${messageOf(error)}`)
    }
  }
  return watchChannel(
    config,
    MODULE_CHANNEL,
    { notified: deliver, listening: () => deliver(null), lost: () => {} },
    'module changes',
    options,
  )
}
