import { useCallback, useEffect, useState } from 'hono/jsx/dom'
import {
  ApiError,
  canWriteNodes,
  listNodeSets,
  modulesOf,
  type NodeModule,
  type NodeSet,
  type Notice,
  type Offers,
  removeModule,
  SessionEnded,
  setModule,
  setNodeSet,
  type User,
} from './api.js'
import { Confirm } from './confirm.js'
import { Feedback, useFeedback } from './feedback.js'
import { InstallForm } from './install.js'
import { Switch } from './switch.js'

type Load =
  | { state: 'loading' }
  | { state: 'failed'; message: string }
  | { state: 'ready'; modules: NodeModule[] }

/** A DOM id from a module name (ids cannot carry `@` and `/` in selectors comfortably). */
const idOf = (name: string) => `module-${name.replace(/[^a-zA-Z0-9_-]/g, '_')}`

/**
 * A package name that wraps only between its words: after each `/`, `-` and `.` (e.g.
 * `@flowadmin-examples/` `text-tools`), never inside one, where a narrow screen would cut it.
 */
function PackageName(props: { name: string }) {
  return (
    <>{props.name.split(/(?<=[/.-])/).flatMap((part, index) => (index === 0 ? [part] : [<wbr />, part]))}</>
  )
}

export function Modules(props: { user: User; offers: Offers; onSessionEnded: (notice: Notice) => void }) {
  const [load, setLoad] = useState<Load>({ state: 'loading' })
  const [pending, setPending] = useState<string[]>([])
  const { alert, status, setStatus, guard } = useFeedback(props.onSessionEnded)
  const [confirming, setConfirming] = useState<string | null>(null)
  const writable = canWriteNodes(props.user.permissions)

  const refresh = useCallback(async (quiet = false) => {
    if (!quiet) setLoad({ state: 'loading' })
    try {
      setLoad({ state: 'ready', modules: modulesOf(await listNodeSets()) })
    } catch (error) {
      if (error instanceof SessionEnded) props.onSessionEnded('session_ended')
      else setLoad({ state: 'failed', message: error instanceof Error ? error.message : String(error) })
    }
  }, [])

  useEffect(() => {
    void refresh()
  }, [])

  const replace = (name: string, change: (module: NodeModule) => NodeModule) =>
    setLoad((current) =>
      current.state === 'ready'
        ? {
            state: 'ready',
            modules: current.modules.map((module) => (module.name === name ? change(module) : module)),
          }
        : current,
    )

  /** Switches, then shows what the server answered: the switch follows the answer, not the click. */
  const toggle = async (key: string, describe: string, apply: () => Promise<void>, enabled: boolean) => {
    setPending((current) => [...current, key])
    setStatus('')
    await guard(async () => {
      try {
        await apply()
        setStatus(`${describe} switched ${enabled ? 'on' : 'off'}.`)
      } catch (error) {
        if (error instanceof ApiError && error.code === 'type_in_use') {
          const types = Array.isArray(error.body.types) ? error.body.types.map(String) : []
          const named = types.length === 1 ? `type ${types[0]}` : `types ${types.join(', ')}`
          throw new ApiError(
            `${describe} stays on: the deployed flows use its ${named}. Remove those nodes from the flows first.`,
            error.status,
            error.code,
            error.body,
          )
        }
        throw error
      }
    })
    setPending((current) => current.filter((item) => item !== key))
  }

  const toggleModule = (module: NodeModule, enabled: boolean) =>
    toggle(
      module.name,
      module.name,
      async () => {
        const answer = await setModule(module.name, enabled)
        replace(module.name, () => answer)
      },
      enabled,
    )

  const toggleSet = (set: NodeSet, enabled: boolean) =>
    toggle(
      set.id,
      set.id,
      async () => {
        const answer = await setNodeSet(set.module, set.name, enabled)
        replace(set.module, (module) => ({
          ...module,
          nodes: module.nodes.map((node) => (node.id === answer.id ? answer : node)),
        }))
      },
      enabled,
    )

  const remove = async (name: string) => {
    setConfirming(null)
    setPending((current) => [...current, `remove:${name}`])
    setStatus(`Removing ${name}…`)
    const done = await guard(async () => {
      await removeModule(name)
      return true
    })
    setPending((current) => current.filter((item) => item !== `remove:${name}`))
    setStatus(done ? `${name} removed.` : '')
    if (done) await refresh(true)
  }

  const installed = async (module: NodeModule) => {
    setStatus(`${module.name} ${module.version} installed.`)
    await refresh(true)
  }

  return (
    <section aria-labelledby="modules-title" class="modules">
      <div class="section-head">
        <h2 id="modules-title">Node modules</h2>
        <button type="button" class="button" onClick={() => void refresh()}>
          Refresh
        </button>
      </div>
      {!writable && (
        <p class="notice">
          You have read-only access: the switches show each module's state but cannot change it.
        </p>
      )}
      <Feedback alert={alert} status={status} />
      {writable && props.offers.install && (
        <InstallForm
          guard={(work) => {
            setStatus('')
            return guard(work)
          }}
          onInstalled={(module) => void installed(module)}
        />
      )}
      {load.state === 'loading' && <p class="muted">Loading modules…</p>}
      {load.state === 'failed' && (
        <p class="error" role="alert">
          {load.message}
        </p>
      )}
      {load.state === 'ready' && load.modules.length === 0 && (
        <p class="muted">No node modules are installed in this runtime's userDir.</p>
      )}
      {load.state === 'ready' && (
        <ul class="cards">
          {load.modules.map((module) => (
            <li class="card" key={module.name}>
              <div class="card-head">
                <div class="title">
                  <h3 id={idOf(module.name)}>
                    <PackageName name={module.name} />
                  </h3>
                  <span class="tag">v{module.version}</span>
                </div>
                <div class="actions">
                  {writable && props.offers.remove && (
                    <button
                      type="button"
                      class="button quiet"
                      aria-label={`Remove ${module.name}`}
                      disabled={pending.includes(`remove:${module.name}`)}
                      onClick={() => setConfirming(module.name)}
                    >
                      Remove
                    </button>
                  )}
                  <Switch
                    checked={module.nodes.every((set) => set.enabled)}
                    labelledBy={idOf(module.name)}
                    disabled={!writable}
                    busy={pending.includes(module.name)}
                    onToggle={() => void toggleModule(module, !module.nodes.every((set) => set.enabled))}
                  />
                </div>
              </div>
              {confirming === module.name && (
                <Confirm
                  question={
                    <>
                      Remove <PackageName name={module.name} /> from this runtime and forget its state?
                    </>
                  }
                  onConfirm={() => void remove(module.name)}
                  onCancel={() => setConfirming(null)}
                />
              )}
              {pending.includes(`remove:${module.name}`) && (
                <p class="progress confirm">
                  <progress aria-label={`Removing ${module.name}`} />
                  Removing {module.name}…
                </p>
              )}
              <ul class="sets" aria-label={`Node sets of ${module.name}`}>
                {module.nodes.map((set) => (
                  <li class="set" key={set.id}>
                    <div class="set-main">
                      <span class="set-name">{set.name}</span>
                      <ul class="types" aria-label="Types">
                        {set.types.map((type) => (
                          <li class="type" key={type}>
                            {type}
                          </li>
                        ))}
                      </ul>
                      {set.err !== undefined ? (
                        <span class="badge bad">error: {set.err}</span>
                      ) : (
                        <span class={set.loaded ? 'badge ok' : 'badge'}>
                          {set.loaded ? 'loaded' : 'not loaded'}
                        </span>
                      )}
                    </div>
                    <Switch
                      checked={set.enabled}
                      label={set.id}
                      disabled={!writable}
                      busy={pending.includes(set.id)}
                      onToggle={() => void toggleSet(set, !set.enabled)}
                    />
                  </li>
                ))}
              </ul>
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}
