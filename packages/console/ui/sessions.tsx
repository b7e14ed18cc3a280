import { useCallback, useEffect, useState } from 'hono/jsx/dom'
import {
  type CreatedToken,
  createToken,
  endAllTokens,
  endToken,
  FLOWADMIN_AUDIENCE,
  isAdmin,
  listTokens,
  type Notice,
  type TokenEntry,
  token,
  type User,
} from './api.js'
import { listResourceServers } from './api-fleet.js'
import { Feedback, useFeedback } from './feedback.js'
import { ItemCard } from './list-view.js'
import { when } from './time.js'

const DAY = 86_400
const LIFETIMES = [
  { label: '7 days', seconds: 7 * DAY },
  { label: '30 days', seconds: 30 * DAY },
  { label: '90 days', seconds: 90 * DAY },
  { label: '1 year', seconds: 365 * DAY },
]

/** Whom a token is for, in words. */
const audienceOf = (audience: string) =>
  audience === FLOWADMIN_AUDIENCE ? 'flowadmin (this API)' : `resource server ${audience}`

/** How each way of signing in reads, but single sign-on: that one reads as the provider's label. */
const SIGN_IN_WORDS: Record<Exclude<NonNullable<TokenEntry['sign_in']>, 'provider'>, string> = {
  password: 'Password',
  password_totp: 'Password + code',
  password_recovery_code: 'Password + recovery code',
  passkey: 'Passkey',
}

/**
 * How the person signed in for this session, in words, with the directory that checked their
 * password when one did ("Password (the directory)"); for an API token or a session from before
 * sessions recorded it, the identity provider or directory of its owner, else null.
 */
const signedInWith = (entry: Pick<TokenEntry, 'sign_in' | 'provider'>): string | null =>
  entry.sign_in === null
    ? (entry.provider ?? null)
    : entry.sign_in === 'provider'
      ? (entry.provider ?? 'Single sign-on')
      : entry.provider === undefined
        ? SIGN_IN_WORDS[entry.sign_in]
        : `${SIGN_IN_WORDS[entry.sign_in]} (${entry.provider})`

/** What to call a token in its row and its button. */
const titleOf = (entry: TokenEntry) =>
  entry.kind === 'api' ? (entry.name ?? entry.id) : `Session ${entry.id}`

/** The caller's own sessions and API tokens: list, end, end all, and mint a token shown once. */
export function Sessions(props: { user: User; onSessionEnded: (notice: Notice) => void }) {
  const [entries, setEntries] = useState<TokenEntry[] | null>(null)
  const { alert, status, setStatus, guard } = useFeedback(props.onSessionEnded)
  const [created, setCreated] = useState<CreatedToken | null>(null)
  const [busy, setBusy] = useState(false)
  // The resource servers a token may be for, offered to people who may list them (`*`).
  const [servers, setServers] = useState<string[]>([])

  const refresh = useCallback(async () => {
    const listed = await guard(listTokens)
    // This tab's session first, then the newest.
    if (listed !== undefined)
      setEntries(
        [...listed].sort(
          (a, b) =>
            Number(b.current) - Number(a.current) || (b.created_at ?? '').localeCompare(a.created_at ?? ''),
        ),
      )
  }, [])

  useEffect(() => {
    void refresh()
    if (isAdmin(props.user.permissions))
      listResourceServers().then(
        (listed) => setServers(listed.map((server) => server.id)),
        () => setServers([]),
      )
  }, [])

  const end = async (entry: TokenEntry) => {
    const done = await guard(async () => {
      await endToken(entry.id)
      return true
    })
    if (done === undefined) return
    if (entry.current) {
      token.clear()
      props.onSessionEnded('ended_here')
      return
    }
    setStatus(`${titleOf(entry)} ended.`)
    await refresh()
  }

  const endAll = async () => {
    const username = props.user.username
    if (username === undefined) return
    const done = await guard(async () => {
      await endAllTokens(username)
      return true
    })
    if (done === undefined) return
    token.clear()
    props.onSessionEnded('signed_out_everywhere')
  }

  const create = async (event: Event) => {
    event.preventDefault()
    if (busy) return
    const form = event.currentTarget as HTMLFormElement
    const data = new FormData(form)
    setBusy(true)
    const minted = await guard(() =>
      createToken(
        String(data.get('name') ?? '').trim(),
        String(data.get('scope') ?? ''),
        Number(data.get('lifetime')),
        String(data.get('audience') ?? '').trim() || FLOWADMIN_AUDIENCE,
      ),
    )
    setBusy(false)
    if (minted === undefined) return
    form.reset()
    setCreated(minted)
    setStatus(`API token ${minted.name} created.`)
    await refresh()
  }

  const copy = async () => {
    if (created === null) return
    try {
      await navigator.clipboard.writeText(created.token)
      setStatus('Token copied to the clipboard.')
    } catch {
      setStatus('Copying was refused: select the token and copy it by hand.')
    }
  }

  return (
    <section aria-labelledby="sessions-title" class="modules">
      <div class="section-head">
        <h2 id="sessions-title">Sessions and API tokens</h2>
        <button type="button" class="button danger" onClick={() => void endAll()}>
          Sign out everywhere
        </button>
      </div>
      <Feedback alert={alert} status={status} />

      <form class="card install" onSubmit={create} aria-labelledby="create-title">
        <h3 id="create-title">Create an API token</h3>
        <p class="muted hint">
          For scripts and CI: it acts as you, within the scope you pick, until it expires, at the one place it
          is for: this API, or one resource server (a Node-RED fleet).
        </p>
        <div class="install-fields">
          <div class="field grow">
            <label for="token-name">Name</label>
            <input
              id="token-name"
              name="name"
              type="text"
              placeholder="e.g. ci-deploy"
              autocomplete="off"
              required
            />
          </div>
          <div class="field">
            <label for="token-scope">Scope</label>
            <select id="token-scope" name="scope">
              <option value="">My permissions</option>
              <option value="read">Read only</option>
            </select>
          </div>
          <div class="field">
            <label for="token-audience">For</label>
            <input
              id="token-audience"
              name="audience"
              type="text"
              list="token-audiences"
              value={FLOWADMIN_AUDIENCE}
              autocomplete="off"
            />
            <datalist id="token-audiences">
              {[FLOWADMIN_AUDIENCE, ...servers].map((id) => (
                <option value={id}>{audienceOf(id)}</option>
              ))}
            </datalist>
          </div>
          <div class="field">
            <label for="token-lifetime">Expires after</label>
            <select id="token-lifetime" name="lifetime">
              {LIFETIMES.map((lifetime) => (
                <option value={String(lifetime.seconds)} selected={lifetime.seconds === 90 * DAY}>
                  {lifetime.label}
                </option>
              ))}
            </select>
          </div>
          <button type="submit" class="button primary" disabled={busy}>
            Create
          </button>
        </div>
      </form>

      {created !== null && (
        <section class="card created" aria-labelledby="created-title">
          <h3 id="created-title">API token {created.name}</h3>
          <p>Copy it now: it is shown only this once.</p>
          <div class="install-fields">
            <div class="field grow">
              <label for="created-token">Token</label>
              <input id="created-token" type="text" readonly value={created.token} class="mono" />
            </div>
            <button type="button" class="button primary" onClick={() => void copy()}>
              Copy
            </button>
            <button type="button" class="button" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
        </section>
      )}

      {entries === null && <p class="muted">Loading sessions…</p>}
      {entries !== null && (
        <ul class="cards" aria-label="Your sessions and API tokens">
          {entries.map((entry) => {
            const signedIn = signedInWith(entry)
            return (
              <ItemCard
                key={entry.id}
                heading={titleOf(entry)}
                tags={
                  <>
                    <span class="tag">{entry.kind === 'api' ? 'API token' : 'session'}</span>
                    {entry.current && <span class="badge ok">this tab</span>}
                  </>
                }
                facts={[
                  ['Scope', entry.scope.join(' ')],
                  ['Client', entry.client_id],
                  ['For', audienceOf(entry.audience)],
                  signedIn === null ? null : ['Signed in with', signedIn],
                  entry.agent === null ? null : ['Browser or tool', entry.agent],
                  ['Created', when(entry.created_at, '')],
                  ['Expires', when(entry.expires_at, 'never')],
                  [
                    'Last used',
                    `${when(entry.last_used_at, 'not yet')}${entry.last_address === null ? '' : ` from ${entry.last_address}`}`,
                  ],
                ]}
                actions={
                  <button
                    type="button"
                    class="button"
                    aria-label={`${entry.kind === 'api' ? 'Revoke' : 'End'} ${titleOf(entry)}`}
                    onClick={() => void end(entry)}
                  >
                    {entry.kind === 'api' ? 'Revoke' : 'End'}
                  </button>
                }
              />
            )
          })}
        </ul>
      )}
    </section>
  )
}
