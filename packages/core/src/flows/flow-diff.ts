// Which nodes differ between two sets of flows, matched by id. Two nodes are the same when their
// keys hold the same values, whatever the order of the keys (objects' keys are compared as sets,
// arrays' items in order).
import type { FlowNode } from './flow-rules.js'

/** A node as a diff names it: its id and type, its tab or subflow (`z`) and name when it has them. */
export interface DiffedNode {
  id: string
  type: string
  z?: string
  name?: string
}

export interface FlowsDiff {
  /** Nodes only the second flows hold, in their order there. */
  added: DiffedNode[]
  /** Nodes only the first flows hold, in their order there. */
  removed: DiffedNode[]
  /** Nodes both hold that differ (as the second flows have them), with the keys that differ, sorted. */
  changed: Array<DiffedNode & { keys: string[] }>
}

/** Compares two JSON values; objects' keys in any order. */
export function sameJson(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    return a.every((item, index) => sameJson(item, b[index]))
  }
  const left = a as Record<string, unknown>
  const right = b as Record<string, unknown>
  const keys = Object.keys(left)
  if (keys.length !== Object.keys(right).length) return false
  return keys.every((key) => Object.hasOwn(right, key) && sameJson(left[key], right[key]))
}

const described = (node: FlowNode): DiffedNode => ({
  id: node.id,
  type: node.type,
  ...(typeof node.z === 'string' && node.z !== '' ? { z: node.z } : {}),
  ...(typeof node.name === 'string' && node.name !== '' ? { name: node.name } : {}),
})

/** The keys whose values differ between two nodes (present in one only, or different), sorted. */
function changedKeys(before: FlowNode, after: FlowNode): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)])
  return [...keys]
    .filter(
      (key) => Object.hasOwn(before, key) !== Object.hasOwn(after, key) || !sameJson(before[key], after[key]),
    )
    .sort()
}

/** The nodes added, removed and changed from `before` to `after`, by id. */
export function diffFlows(before: readonly FlowNode[], after: readonly FlowNode[]): FlowsDiff {
  const earlier = new Map(before.map((node) => [node.id, node]))
  const later = new Set(after.map((node) => node.id))
  const added: DiffedNode[] = []
  const changed: FlowsDiff['changed'] = []
  for (const node of after) {
    const old = earlier.get(node.id)
    if (old === undefined) added.push(described(node))
    else {
      const keys = changedKeys(old, node)
      if (keys.length > 0) changed.push({ ...described(node), keys })
    }
  }
  const removed = before.filter((node) => !later.has(node.id)).map(described)
  return { added, removed, changed }
}
