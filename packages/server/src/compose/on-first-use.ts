// Ports whose adapter is loaded at the first call: the libraries behind passkeys, second factors,
// single sign-on and installs are large, and a server may run for its whole life without a call.

/** The names of the methods of `T` that return a promise. */
type AsyncMethodOf<T> = {
  [K in keyof T]: T[K] extends (...args: never[]) => Promise<unknown> ? K : never
}[keyof T]

/**
 * The methods `names` of the adapter `load` makes, each loading it at the first call (once, for
 * every method; a failed load is tried again at the next call) and then calling its own.
 */
export function onFirstUse<T extends object, K extends AsyncMethodOf<T>>(
  load: () => Promise<T>,
  names: readonly K[],
): Pick<T, K> {
  let loading: Promise<T> | undefined
  const adapter = () => {
    loading ??= load().catch((error: unknown) => {
      loading = undefined
      throw error
    })
    return loading
  }
  const methods: Partial<Record<K, (...args: unknown[]) => Promise<unknown>>> = {}
  for (const name of names) {
    methods[name] = async (...args) => {
      const loaded = await adapter()
      return Reflect.apply(loaded[name] as (...args: unknown[]) => Promise<unknown>, loaded, args)
    }
  }
  return methods as unknown as Pick<T, K>
}
