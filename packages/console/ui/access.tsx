import { useEffect, useState } from 'hono/jsx/dom'
import { isAdmin, type Notice, type User } from './api.js'
import { type Grant, listGrants, type OwnAccess, ownAccess } from './api-access.js'
import { Feedback, useFeedback } from './feedback.js'

/** Who holds a grant, as a person reads it. */
const KINDS: Record<Grant['kind'], string> = {
  user: 'user',
  'identity-provider-group': 'identity provider group',
  'directory-group': 'directory group',
  'api-token': 'API token',
}

/** A grant's role, or the permissions it gives as such. */
const given = (grant: { role: string } | { permissions: string[] }) =>
  'role' in grant ? grant.role : grant.permissions.join(', ')

/** The caller's own access: what this session may do on each scope, their grants and the roles they name. */
function Own(props: { access: OwnAccess }) {
  const { access } = props
  const scopes = Object.entries(access.scopes)
  return (
    <section class="card security access" aria-labelledby="own-title">
      <h3 id="own-title">Your access</h3>
      <h4>What this session may do</h4>
      {scopes.length === 0 ? (
        <p>Nothing yet, on any scope.</p>
      ) : (
        <table class="activity" tabindex={0} aria-label="What this session may do">
          <thead>
            <tr>
              <th scope="col">Scope</th>
              <th scope="col">Permissions</th>
            </tr>
          </thead>
          <tbody>
            {scopes.map(([scope, permissions]) => (
              <tr key={scope}>
                <td>{scope}</td>
                <td>{permissions.join(', ')}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <h4>Your grants</h4>
      {access.grants.length === 0 ? (
        <p>No grant.</p>
      ) : (
        <ul aria-label="Your grants">
          {access.grants.map((grant) => (
            <li key={`${given(grant)}@${grant.on}`}>
              {'role' in grant ? `the role ${grant.role}` : grant.permissions.join(', ')} on {grant.on}
            </li>
          ))}
        </ul>
      )}
      {Object.keys(access.roles).length > 0 && (
        <>
          <h4>The roles they name</h4>
          <table class="activity" tabindex={0} aria-label="Your roles">
            <thead>
              <tr>
                <th scope="col">Role</th>
                <th scope="col">Permissions</th>
                <th scope="col">Longest token</th>
              </tr>
            </thead>
            <tbody>
              {Object.entries(access.roles).map(([name, role]) => (
                <tr key={name}>
                  <td>{name}</td>
                  <td>{role.permissions.join(', ')}</td>
                  <td>{role.maxTokenLifetime === null ? 'no limit' : `${role.maxTokenLifetime} s`}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </>
      )}
    </section>
  )
}

/** Everyone's grants, read-only: the settings decide them, and API tokens carry theirs. */
function Everyone(props: { grants: Grant[] }) {
  return (
    <section class="card security access" aria-labelledby="everyone-title">
      <h3 id="everyone-title">Who holds which role where</h3>
      <p class="muted hint">
        Read-only: the settings decide these (<code>adminAuth.users</code>, the identity provider's and the
        directory's group maps) and are read again on a reload; an API token carries what its scope names.
      </p>
      {props.grants.length === 0 ? (
        <p>No grant.</p>
      ) : (
        <table class="activity" tabindex={0} aria-label="Who holds which role where">
          <thead>
            <tr>
              <th scope="col">Who</th>
              <th scope="col">Role or permissions</th>
              <th scope="col">Scope</th>
              <th scope="col">From</th>
            </tr>
          </thead>
          <tbody>
            {props.grants.map((grant, index) => (
              <tr key={`${grant.kind}-${grant.holder}-${index}`}>
                <td>
                  {grant.holder} <span class="tag">{KINDS[grant.kind]}</span>
                  {grant.owner !== null && ` of ${grant.owner}`}
                </td>
                <td>
                  {grant.role === null
                    ? grant.permissions.join(', ')
                    : `${grant.role} (${grant.permissions.join(', ') || 'no such role'})`}
                </td>
                <td>{grant.on}</td>
                <td>{grant.from === 'settings' ? 'the settings' : 'its scope'}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}

/**
 * A person's own access (`GET /auth/access`), and, for an operator with every right on flowadmin,
 * who holds which role where (`GET /auth/grants`).
 */
export function Access(props: { user: User; onSessionEnded: (notice: Notice) => void }) {
  const [own, setOwn] = useState<OwnAccess | null>(null)
  const [everyone, setEveryone] = useState<Grant[] | null>(null)
  const { alert, status, guard, setStatus } = useFeedback(props.onSessionEnded)
  const operator = isAdmin(props.user.permissions)
  const load = async (announce: boolean) => {
    const loaded = await guard(() =>
      Promise.all([ownAccess(), operator ? listGrants() : Promise.resolve(null)]),
    )
    if (loaded === undefined) return
    setOwn(loaded[0])
    setEveryone(loaded[1])
    if (announce) setStatus('Access refreshed.')
  }
  useEffect(() => {
    void load(false)
  }, [])
  return (
    <section aria-labelledby="access-title" class="modules">
      <div class="section-head">
        <h2 id="access-title">Access</h2>
        <button type="button" class="button" onClick={() => void load(true)}>
          Refresh
        </button>
      </div>
      <p class="muted hint">
        Roles on scopes: <code>everywhere</code>, <code>flowadmin</code> (this server's own API) or a group of
        instances. A session may do no more than its person's grants allow.
      </p>
      <Feedback alert={alert} status={status} />
      {own === null && alert === null && <p class="muted">Loading access…</p>}
      {own !== null && <Own access={own} />}
      {everyone !== null && <Everyone grants={everyone} />}
    </section>
  )
}
