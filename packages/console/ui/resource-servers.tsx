import { listResourceServers, type Notice, type ResourceServer } from './api.js'
import { Feedback, useRefreshedList } from './feedback.js'
import { when } from './sessions.js'

/**
 * The resource servers of the settings (Node-RED instances that ask this server about tokens) and
 * when each last called: whether every instance of a fleet is wired up, at a glance. For `*` only.
 */
export function ResourceServers(props: { onSessionEnded: (notice: Notice) => void }) {
  const {
    items: servers,
    refresh,
    alert,
    status,
  } = useRefreshedList<ResourceServer>(
    listResourceServers,
    'Resource servers refreshed.',
    props.onSessionEnded,
  )

  return (
    <section aria-labelledby="resource-servers-title" class="modules">
      <div class="section-head">
        <h2 id="resource-servers-title">Resource servers</h2>
        <button type="button" class="button" onClick={() => void refresh(true)}>
          Refresh
        </button>
      </div>
      <p class="muted hint">
        The Node-RED instances of adminAuth.resourceServers, which ask this server about their users' tokens.
        A last call counts since this server started or last reloaded its settings.
      </p>
      <Feedback alert={alert} status={status} />
      {servers === null && alert === null && <p class="muted">Loading resource servers…</p>}
      {servers !== null && servers.length === 0 && (
        <p class="muted">None is configured: add them to adminAuth.resourceServers in the settings.</p>
      )}
      {servers !== null && servers.length > 0 && (
        <ul class="cards" aria-label="Resource servers">
          {servers.map((server) => (
            <li class="card token" key={server.id}>
              <div class="token-main">
                <div class="title">
                  <h3>{server.id}</h3>
                </div>
                <dl class="facts">
                  <dt>Last call</dt>
                  <dd>
                    {server.last_call_at === null ? (
                      'never since start'
                    ) : (
                      <time datetime={server.last_call_at}>{when(server.last_call_at, '')}</time>
                    )}
                  </dd>
                </dl>
              </div>
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}
