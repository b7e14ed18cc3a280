import type { ModuleStore, Stores, TypeUsage } from '@flowadmin/core'
import { createCore } from '@flowadmin/core'
import { describe, expect, it } from 'vitest'
import { createFakeLoader, type PlainHasher } from '../doubles.js'
import type { OpenStores } from '../store-contract.js'
import { ADDRESS, GREETING, TOOLS, useTestCore } from './fixture.js'

/** The core's modules rules over the stores `open` gives (fresh ones for each core). */
export function describeModules(name: string, open: OpenStores): void {
  const createTestCore = useTestCore(open)

  const actor = { username: 'admin', clientId: 'service-admin', address: ADDRESS }

  /** Counts the writes that reach the module store. */
  function countWrites(store: ModuleStore) {
    const writes: string[] = []
    const setEnabled = store.setEnabled.bind(store)
    store.setEnabled = (module, sets, enabled) => {
      writes.push(`${module}:${sets.join(',')}=${enabled}`)
      return setEnabled(module, sets, enabled)
    }
    return writes
  }

  /** A new core over the stores of `first`, as a restarted process would be, with a loader that records. */
  function restartOn(first: { stores: Stores; hasher: PlainHasher; typeUsage: TypeUsage }) {
    const loader = createFakeLoader()
    const core = createCore({
      stores: first.stores,
      verifier: first.hasher,
      typeUsage: first.typeUsage,
      loader,
    })
    return { core, loader }
  }

  async function synced(options: Parameters<typeof createTestCore>[1] = {}) {
    const test = await createTestCore({}, options)
    await test.core.modules.sync([GREETING, TOOLS])
    return test
  }

  describe(`modules: ${name}`, () => {
    describe('module inventory', () => {
      it('records discovered modules and loads every enabled set', async () => {
        const { core, loader } = await synced()
        expect(loader.loads).toEqual([
          'flowadmin-example-greeting/greeting',
          '@acme/text-tools/upper',
          '@acme/text-tools/lower',
        ])
        expect(await core.modules.get('@acme/text-tools')).toEqual({
          ok: true,
          value: {
            name: '@acme/text-tools',
            version: '2.3.0',
            nodes: [
              {
                id: '@acme/text-tools/upper',
                name: 'upper',
                types: ['upper-case'],
                enabled: true,
                loaded: true,
                module: '@acme/text-tools',
                version: '2.3.0',
              },
              {
                id: '@acme/text-tools/lower',
                name: 'lower',
                types: ['lower-case', 'title-case'],
                enabled: true,
                loaded: true,
                module: '@acme/text-tools',
                version: '2.3.0',
              },
            ],
          },
        })
        expect((await core.modules.list()).map((module) => module.name)).toEqual([
          '@acme/text-tools',
          'flowadmin-example-greeting',
        ])
      })

      it('loads the modules it recorded when recording another fails, then reports the failure', async () => {
        const test = await createTestCore()
        const upsert = test.stores.modules.upsert.bind(test.stores.modules)
        test.stores.modules.upsert = (module) =>
          module.name === TOOLS.name ? Promise.reject(new Error('disk full')) : upsert(module)
        await expect(test.core.modules.sync([TOOLS, GREETING])).rejects.toThrow('disk full')
        expect(test.loader.loads).toEqual(['flowadmin-example-greeting/greeting'])
        expect((await test.core.modules.get(GREETING.name)).ok).toBe(true)
      })

      it('keeps the stored state of modules discovery no longer finds, shown as not installed', async () => {
        const first = await synced()
        await first.core.modules.setModuleEnabled(TOOLS.name, false, actor)
        const { core: restarted, loader } = restartOn(first)
        await restarted.modules.sync([GREETING])
        expect(loader.loads).toEqual(['flowadmin-example-greeting/greeting'])
        const tools = await restarted.modules.get(TOOLS.name)
        expect(
          tools.ok && tools.value.nodes.map(({ enabled, loaded, err }) => ({ enabled, loaded, err })),
        ).toEqual([
          { enabled: false, loaded: false, err: 'not installed' },
          { enabled: false, loaded: false, err: 'not installed' },
        ])
        // Back again, it keeps its state: still disabled, so not loaded.
        const { core: back, loader: backLoader } = restartOn(first)
        await back.modules.sync([GREETING, TOOLS])
        expect(backLoader.loads).toEqual(['flowadmin-example-greeting/greeting'])
        const again = await back.modules.get(TOOLS.name)
        expect(
          again.ok && again.value.nodes.map(({ enabled, loaded, err }) => ({ enabled, loaded, err })),
        ).toEqual([
          { enabled: false, loaded: false, err: undefined },
          { enabled: false, loaded: false, err: undefined },
        ])
      })

      it('keeps every module when discovery finds none at all (node_modules missing or unreadable)', async () => {
        const first = await synced()
        await first.core.modules.setNodeSetEnabled(TOOLS.name, 'lower', false, actor)
        const { core: restarted } = restartOn(first)
        await restarted.modules.sync([])
        expect((await restarted.modules.list()).map((module) => module.name)).toEqual([
          TOOLS.name,
          GREETING.name,
        ])
        const { core: back } = restartOn(first)
        await back.modules.sync([GREETING, TOOLS])
        const tools = await back.modules.get(TOOLS.name)
        expect(tools.ok && tools.value.nodes.map((set) => [set.name, set.enabled, set.loaded])).toEqual([
          ['upper', true, true],
          ['lower', false, false],
        ])
      })

      it('forgets a module only when told to; it then starts enabled when discovered again', async () => {
        const first = await synced()
        const { core } = first
        await core.modules.setModuleEnabled(TOOLS.name, false, actor)
        expect(await core.modules.forget(TOOLS.name)).toBe(true)
        expect(await core.modules.forget(TOOLS.name)).toBe(false)
        expect(await core.modules.get(TOOLS.name)).toEqual({
          ok: false,
          error: { code: 'module_not_found', module: TOOLS.name },
        })
        const { core: restarted } = restartOn(first)
        await restarted.modules.sync([GREETING, TOOLS])
        const tools = await restarted.modules.get(TOOLS.name)
        expect(tools.ok && tools.value.nodes.map((set) => set.enabled)).toEqual([true, true])
      })

      it('reports a set that failed to load as not loaded, with the error, still enabled', async () => {
        const { core } = await synced({
          failures: { '@acme/text-tools/lower': 'SyntaxError: Unexpected token' },
        })
        const lower = await core.modules.getNodeSet(TOOLS.name, 'lower')
        expect(lower).toEqual({
          ok: true,
          value: expect.objectContaining({
            enabled: true,
            loaded: false,
            err: 'SyntaxError: Unexpected token',
          }),
        })
      })
    })

    describe('enabling and disabling a module', () => {
      it('disables every set at once and keeps them loaded', async () => {
        const { core, events } = await synced()
        const result = await core.modules.setModuleEnabled(TOOLS.name, false, actor)
        expect(result.ok && result.value.nodes.map((set) => [set.enabled, set.loaded])).toEqual([
          [false, true],
          [false, true],
        ])
        expect(events.ofType('module.disabled')).toEqual([
          expect.objectContaining({
            module: TOOLS.name,
            sets: ['@acme/text-tools/upper', '@acme/text-tools/lower'],
            ...actor,
          }),
        ])
      })

      it('refuses an unknown module and writes nothing', async () => {
        const { core, stores } = await synced()
        const writes = countWrites(stores.modules)
        expect(await core.modules.setModuleEnabled('Flowadmin-Example-Greeting', false, actor)).toEqual({
          ok: false,
          error: { code: 'module_not_found', module: 'Flowadmin-Example-Greeting' },
        })
        expect(writes).toEqual([])
      })

      it('refuses to disable a module whose types are in use, naming them, and changes nothing', async () => {
        const { core, events, stores } = await synced({ inUse: ['title-case', 'lower-case', 'debug'] })
        const writes = countWrites(stores.modules)
        expect(await core.modules.setModuleEnabled(TOOLS.name, false, actor)).toEqual({
          ok: false,
          error: { code: 'type_in_use', types: ['lower-case', 'title-case'] },
        })
        expect(writes).toEqual([])
        const after = await core.modules.get(TOOLS.name)
        expect(after.ok && after.value.nodes.every((set) => set.enabled)).toBe(true)
        expect(events.ofType('module.disabled')).toEqual([])
      })

      it('skips the in-use check for sets already disabled', async () => {
        const { core, typeUsage } = await synced()
        await core.modules.setModuleEnabled(GREETING.name, false, actor)
        typeUsage.inUse.add('greeting')
        expect((await core.modules.setModuleEnabled(GREETING.name, false, actor)).ok).toBe(true)
      })

      it('writes nothing and reports nothing when the module already has the state', async () => {
        const { core, stores, events } = await synced()
        const writes = countWrites(stores.modules)
        const result = await core.modules.setModuleEnabled(TOOLS.name, true, actor)
        expect(result.ok && result.value.nodes.every((set) => set.enabled)).toBe(true)
        expect(writes).toEqual([])
        expect(events.ofType('module.enabled')).toEqual([])
      })

      it('changes only the sets not yet in the requested state', async () => {
        const { core, stores } = await synced()
        await core.modules.setNodeSetEnabled(TOOLS.name, 'upper', false, actor)
        const writes = countWrites(stores.modules)
        await core.modules.setModuleEnabled(TOOLS.name, false, actor)
        expect(writes).toEqual(['@acme/text-tools:lower=false'])
      })

      it('persists the state: a new process on the same store sees it, and does not load disabled sets', async () => {
        const first = await synced()
        await first.core.modules.setModuleEnabled(TOOLS.name, false, actor)
        const { core: restarted, loader } = restartOn(first)
        const loads = loader.loads
        await restarted.modules.sync([GREETING, TOOLS])
        expect(loads).toEqual(['flowadmin-example-greeting/greeting'])
        const tools = await restarted.modules.get(TOOLS.name)
        expect(tools.ok && tools.value.nodes.map((set) => [set.enabled, set.loaded])).toEqual([
          [false, false],
          [false, false],
        ])
        const enabled = await restarted.modules.setModuleEnabled(TOOLS.name, true, actor)
        expect(loads).toEqual([
          'flowadmin-example-greeting/greeting',
          '@acme/text-tools/upper',
          '@acme/text-tools/lower',
        ])
        expect(enabled.ok && enabled.value.nodes.map((set) => [set.enabled, set.loaded])).toEqual([
          [true, true],
          [true, true],
        ])
      })
    })

    describe('loading on enable', () => {
      it('loads a set enabled after start-up, and reports a failure without undoing the enable', async () => {
        const test = await createTestCore(
          {},
          { failures: { 'flowadmin-example-greeting/greeting': 'greeting.js: SyntaxError' } },
        )
        await test.stores.modules.upsert(GREETING)
        await test.stores.modules.setEnabled(GREETING.name, ['greeting'], false)
        await test.core.modules.sync([GREETING])
        expect(test.loader.loads).toEqual([])
        const result = await test.core.modules.setModuleEnabled(GREETING.name, true, actor)
        expect(result).toEqual({
          ok: true,
          value: {
            name: GREETING.name,
            version: '1.0.0',
            nodes: [
              {
                id: 'flowadmin-example-greeting/greeting',
                name: 'greeting',
                types: ['greeting'],
                enabled: true,
                loaded: false,
                module: GREETING.name,
                version: '1.0.0',
                err: 'greeting.js: SyntaxError',
              },
            ],
          },
        })
        expect(test.loader.loads).toEqual(['flowadmin-example-greeting/greeting'])
      })
    })

    describe('one node set', () => {
      it('enables and disables a single set', async () => {
        const { core, events } = await synced()
        const result = await core.modules.setNodeSetEnabled(TOOLS.name, 'lower', false, actor)
        expect(result).toMatchObject({
          ok: true,
          value: { id: '@acme/text-tools/lower', enabled: false, loaded: true },
        })
        const module = await core.modules.get(TOOLS.name)
        expect(module.ok && module.value.nodes.map((set) => set.enabled)).toEqual([true, false])
        expect(events.ofType('module.disabled')).toEqual([
          expect.objectContaining({ sets: ['@acme/text-tools/lower'] }),
        ])
      })

      it('refuses an unknown set or module', async () => {
        const { core } = await synced()
        expect(await core.modules.setNodeSetEnabled(TOOLS.name, 'middle', false, actor)).toEqual({
          ok: false,
          error: { code: 'node_set_not_found', module: TOOLS.name, set: 'middle' },
        })
        expect(await core.modules.getNodeSet('nope', 'x')).toEqual({
          ok: false,
          error: { code: 'module_not_found', module: 'nope' },
        })
      })

      it('refuses to disable a set whose type is in use', async () => {
        const { core } = await synced({ inUse: ['upper-case'] })
        expect(await core.modules.setNodeSetEnabled(TOOLS.name, 'upper', false, actor)).toEqual({
          ok: false,
          error: { code: 'type_in_use', types: ['upper-case'] },
        })
        expect((await core.modules.setNodeSetEnabled(TOOLS.name, 'lower', false, actor)).ok).toBe(true)
      })
    })

    describe('when the deployed flows cannot be read', () => {
      it('refuses every disable and changes nothing, but still enables', async () => {
        const { core, typeUsage, stores } = await synced()
        await core.modules.setNodeSetEnabled(TOOLS.name, 'upper', false, actor)
        typeUsage.unreadable = true
        const writes = countWrites(stores.modules)
        expect(await core.modules.setModuleEnabled(GREETING.name, false, actor)).toEqual({
          ok: false,
          error: { code: 'flows_unavailable' },
        })
        expect(await core.modules.setNodeSetEnabled(TOOLS.name, 'lower', false, actor)).toEqual({
          ok: false,
          error: { code: 'flows_unavailable' },
        })
        expect(writes).toEqual([])
        expect((await core.modules.setNodeSetEnabled(TOOLS.name, 'upper', true, actor)).ok).toBe(true)
      })
    })

    describe('concurrent changes to one module', () => {
      it('are applied one after another: each set loaded once, one event per real change, last answer wins', async () => {
        const test = await createTestCore()
        // Disabled when the process starts, so not loaded yet.
        await test.stores.modules.upsert(TOOLS)
        await test.stores.modules.setEnabled(TOOLS.name, ['upper', 'lower'], false)
        await test.core.modules.sync([GREETING, TOOLS])
        // A slow store makes every write overlap with the others unless the core serialises them.
        const setEnabled = test.stores.modules.setEnabled.bind(test.stores.modules)
        test.stores.modules.setEnabled = async (...args) => {
          await new Promise((resolve) => setTimeout(resolve, 1))
          return setEnabled(...args)
        }
        const loadsBefore = test.loader.loads.length
        const eventsBefore = test.events.events.length
        const wanted = Array.from({ length: 50 }, (_, i) => i % 2 === 0)
        const answers = await Promise.all(
          wanted.map((enabled) => test.core.modules.setModuleEnabled(TOOLS.name, enabled, actor)),
        )
        expect(answers.map((answer) => answer.ok && answer.value.nodes.map((set) => set.enabled))).toEqual(
          wanted.map((enabled) => [enabled, enabled]),
        )
        expect(test.loader.loads.slice(loadsBefore)).toEqual([
          '@acme/text-tools/upper',
          '@acme/text-tools/lower',
        ])
        const changes = test.events.events.slice(eventsBefore).map((event) => event.type)
        expect(changes).toEqual(wanted.map((enabled) => (enabled ? 'module.enabled' : 'module.disabled')))
        const stored = await test.core.modules.get(TOOLS.name)
        expect(stored.ok && stored.value.nodes.map((set) => set.enabled)).toEqual([false, false])
      })
    })

    describe('installing and removing modules', () => {
      const EXTRA = {
        name: 'node-red-contrib-extra',
        version: '1.0.0',
        sets: [{ name: 'extra', types: ['extra'] }],
      }

      it('installs: the module is recorded enabled, loaded, listed, with one event', async () => {
        const test = await synced()
        test.installer.publish(EXTRA)
        const result = await test.core.modules.install({ module: EXTRA.name, version: '^1' }, actor)
        expect(result).toEqual({
          ok: true,
          value: {
            name: EXTRA.name,
            version: '1.0.0',
            nodes: [
              {
                id: `${EXTRA.name}/extra`,
                name: 'extra',
                types: ['extra'],
                enabled: true,
                loaded: true,
                module: EXTRA.name,
                version: '1.0.0',
              },
            ],
          },
        })
        expect(test.installer.calls).toEqual([`install ${EXTRA.name}@^1`])
        expect((await test.core.modules.list()).map((module) => module.name)).toContain(EXTRA.name)
        expect(test.events.ofType('module.installed')).toEqual([
          expect.objectContaining({ module: EXTRA.name, version: '1.0.0', ...actor }),
        ])
      })

      it('installs an upload: the module is the one the installer found in it', async () => {
        const test = await synced()
        test.installer.publish(EXTRA)
        const bytes = new TextEncoder().encode(EXTRA.name)
        const result = await test.core.modules.install({ tarball: bytes }, actor)
        expect(
          result.ok && [result.value.name, result.value.nodes.map((set) => [set.enabled, set.loaded])],
        ).toEqual([EXTRA.name, [[true, true]]])
        expect(test.installer.calls).toEqual([`install upload of ${bytes.byteLength} bytes`])
      })

      it('an installer failure is the answer, and nothing is recorded', async () => {
        const test = await synced()
        test.installer.publish(EXTRA)
        test.installer.failNext({ code: 'module_not_allowed', message: 'Not allowed by the settings' })
        expect(await test.core.modules.install({ module: EXTRA.name }, actor)).toEqual({
          ok: false,
          error: { code: 'module_not_allowed', message: 'Not allowed by the settings' },
        })
        expect((await test.core.modules.get(EXTRA.name)).ok).toBe(false)
        expect(test.events.ofType('module.installed')).toEqual([])
      })

      it('a module installed again keeps its stored state', async () => {
        const test = await synced()
        await test.core.modules.setModuleEnabled(TOOLS.name, false, actor)
        test.installer.publish({ ...TOOLS, version: '2.4.0' })
        const result = await test.core.modules.install({ module: TOOLS.name }, actor)
        expect(result.ok && [result.value.version, result.value.nodes.map((set) => set.enabled)]).toEqual([
          '2.4.0',
          [false, false],
        ])
      })

      it('removes: uninstalled, forgotten, one event; refused while a type is in use; 404 when unknown', async () => {
        const test = await synced({ inUse: ['lower-case'] })
        expect(await test.core.modules.remove(TOOLS.name, actor)).toEqual({
          ok: false,
          error: { code: 'type_in_use', types: ['lower-case'] },
        })
        expect(await test.core.modules.remove('nope', actor)).toEqual({
          ok: false,
          error: { code: 'module_not_found', module: 'nope' },
        })
        expect(test.installer.calls).toEqual([])
        expect(await test.core.modules.remove(GREETING.name, actor)).toEqual({ ok: true, value: undefined })
        expect(test.installer.calls).toEqual([`remove ${GREETING.name}`])
        expect((await test.core.modules.get(GREETING.name)).ok).toBe(false)
        expect(test.events.ofType('module.removed')).toEqual([
          expect.objectContaining({ module: GREETING.name, version: '1.0.0', ...actor }),
        ])
      })

      it('a module known but not installed is only forgotten: npm is not asked', async () => {
        const first = await synced()
        const { core } = restartOn(first)
        await core.modules.sync([GREETING])
        expect((await core.modules.remove(TOOLS.name, actor)).ok).toBe(true)
        expect((await core.modules.get(TOOLS.name)).ok).toBe(false)
      })
    })
  })
}
