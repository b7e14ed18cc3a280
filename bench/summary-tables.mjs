// The run's closing tables: the targets held or missed, and the cost of logins and revokes as
// live sessions grow.
import { fmt } from './report.mjs'

/** The targets, each with its figure and whether it held. */
export function targetsTable(targets) {
  const lines = ['\n## Targets (flowadmin)']
  const width = Math.max(...targets.map((t) => t.name.length))
  for (const t of targets) {
    const value = t.value === null || Number.isNaN(t.value) ? '-' : `${fmt(t.value, 2)}${t.unit}`
    const status = t.limit === null && t.status !== 'not measured' ? '' : t.status.toUpperCase()
    lines.push(`${t.name.padEnd(width)}  ${value.padStart(10)}  ${status}`.trimEnd())
  }
  return lines.join('\n')
}

/** Login and revoke cost as live sessions grow, per target. */
export function growthTable(results, sessionSizes, targetNames) {
  const lines = ['\n## Session growth: cost of a login and a revoke as live sessions grow']
  const header = [
    'sessions',
    ...targetNames.flatMap((n) => [`${n} login/s`, 'CPU ms', `${n} revoke/s`, 'CPU ms']),
  ]
  const body = []
  for (const size of [0, ...sessionSizes]) {
    const login = results[size === 0 ? 'login' : `login-${size}`]
    const revoke = results[size === 0 ? 'revoke' : `revoke-${size}`]
    if (!login && !revoke) continue
    const cells = [String(size)]
    for (const name of targetNames) {
      const l = login?.[name]
      const r = revoke?.[name]
      cells.push(fmt(l?.rps, 1), fmt(l?.cpuPerRequest, 2), fmt(r?.rps, 0), fmt(r?.cpuPerRequest, 3))
    }
    body.push(cells)
  }
  if (body.length === 0) return ''
  const widths = header.map((_, i) => Math.max(...[header, ...body].map((row) => row[i].length)))
  lines.push(...[header, ...body].map((cells) => cells.map((c, i) => c.padStart(widths[i])).join('  ')))
  lines.push('(revoke rows start with the token pool on top of the sessions shown)')
  return lines.join('\n')
}
