// npm's output about a package, version or tarball the registry does not have, in words.

/**
 * What went wrong, in words, when npm's output names something the registry does not have: the
 * module `wanted`, a package it depends on, a version, or a tarball URL that answered 404. The
 * registry is the one npm asked (from its request), else `registry`. Null for any other failure.
 */
export function describeNpmFailure(output: string, wanted: string, registry: string | null): string | null {
  const code = /npm (?:error|ERR!) code (E[A-Z0-9]+)/.exec(output)?.[1]
  if (code === 'E404') {
    const resource = /The requested resource '(.+?)' could not be found/.exec(output)?.[1]
    if (resource === undefined) return null
    if (/^https?:\/\//i.test(resource)) return `no tarball at ${withoutCredentials(resource)}`
    const name = packageName(resource)
    const asked = /404 Not Found - GET (\S+)/.exec(output)?.[1]
    const where = inRegistry(registryOf(asked, name) ?? registry)
    return name === wanted
      ? `module "${name}" not found in ${where}`
      : `module "${wanted}" needs "${name}", which is not found in ${where}`
  }
  if (code === 'ETARGET') {
    const spec = /No matching version found for (\S+?)\.?$/m.exec(output)?.[1]
    if (spec === undefined) return null
    const name = packageName(spec)
    const range = spec.slice(name.length + 1)
    const where = inRegistry(registry)
    return name === wanted
      ? `no version of module "${name}" matches ${range} in ${where}`
      : `module "${wanted}" needs "${name}" at ${range}, a version not found in ${where}`
  }
  return null
}

/** `name` of `name@range` or `@scope/name@range`. */
function packageName(spec: string): string {
  const at = spec.indexOf('@', 1)
  return at === -1 ? spec : spec.slice(0, at)
}

/** The registry of a packument's URL (`<registry><name>`, a scope's `/` escaped); null when it is not one. */
function registryOf(url: string | undefined, name: string): string | null {
  const escaped = name.replace('/', '%2f')
  if (url === undefined || !url.toLowerCase().endsWith(`/${escaped}`)) return null
  return url.slice(0, url.length - escaped.length)
}

const inRegistry = (registry: string | null) =>
  registry === null ? 'the registry' : `the registry ${withoutCredentials(registry)}`

/** A URL as it may be shown: without a user name or password. */
function withoutCredentials(text: string): string {
  try {
    const url = new URL(text)
    url.username = ''
    url.password = ''
    return url.toString()
  } catch {
    return text
  }
}
