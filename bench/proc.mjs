// CPU time and memory of a process, read from /proc (Linux only).
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'

/** Clock ticks per second of the utime/stime fields (usually 100). */
export const CLK_TCK = (() => {
  try {
    const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim())
    return Number.isInteger(value) && value > 0 ? value : 100
  } catch {
    return 100
  }
})()

/** CPU time (user + system, every thread) the process has used so far, in milliseconds. */
export function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  // The command name (field 2) may contain spaces or parentheses: fields count from the last ')'.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  const utime = Number(fields[11])
  const stime = Number(fields[12])
  return ((utime + stime) * 1000) / CLK_TCK
}

/** Resident set size now and its peak since start (or since the last resetPeak), in MB (MiB). */
export function memory(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8')
  const kb = (key) => {
    const match = status.match(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm'))
    return match ? Number(match[1]) : Number.NaN
  }
  return { rssMb: kb('VmRSS') / 1024, peakMb: kb('VmHWM') / 1024 }
}

/** Resets the peak RSS (VmHWM) to the current RSS; false when the kernel refuses. */
export function resetPeak(pid) {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5')
    return true
  } catch {
    return false
  }
}

/** The machine, for the report. */
export function machine() {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8')
  const model = cpuinfo.match(/^model name\s*:\s*(.+)$/m)?.[1]?.trim() ?? 'unknown'
  const memTotalKb = Number(readFileSync('/proc/meminfo', 'utf8').match(/^MemTotal:\s+(\d+)/m)?.[1] ?? 0)
  const loadavg = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).map(Number)
  const cpus = cpuinfo.match(/^processor\s*:/gm)?.length ?? 0
  return {
    cpus,
    model,
    memGb: Math.round((memTotalKb / 1024 / 1024) * 10) / 10,
    node: process.version,
    loadavg,
  }
}
