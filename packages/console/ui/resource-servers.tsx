import type { Notice } from './api.js'
import { listResourceServers, type ResourceServer } from './api-fleet.js'
import { type Fact, ListView } from './list-view.js'
import { Time } from './time.js'

/**
 * The resource servers of the settings (Node-RED instances that ask this server about tokens) and
 * when each last called: whether every instance of a fleet is wired up, at a glance. For `*` only.
 */
export function ResourceServers(props: { onSessionEnded: (notice: Notice) => void }) {
  return (
    <ListView
      id="resource-servers"
      title="Resource servers"
      hint="The Node-RED instances of adminAuth.resourceServers, which ask this server about their users' tokens. A last call counts since this server started or last reloaded its settings."
      label="Resource servers"
      empty="None is configured: add them to adminAuth.resourceServers in the settings."
      load={listResourceServers}
      card={(server: ResourceServer) => ({
        id: server.id,
        ...(server.secret === 'password_hash' && {
          tags: <span class="tag warn">password hash</span>,
        }),
        facts: [
          ['Last call', <Time at={server.last_call_at} otherwise="never since start" />],
          ...(server.secret === undefined ? [] : [['Secret', secretOf(server.secret)] as Fact]),
        ],
      })}
      onSessionEnded={props.onSessionEnded}
    />
  )
}

/** What a server's secret is, and what to do about a password hash. */
const secretOf = (secret: 'digest' | 'password_hash') =>
  secret === 'digest'
    ? 'a machine secret'
    : 'a password hash: after each start or reload, five wrong secrets lock this server out for 15 minutes. Replace it with one from flowadmin secret.'
