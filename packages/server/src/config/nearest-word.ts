// The known word a mistyped one was probably meant to be: what "did you mean" hints are made of.

/** Longest word compared: anything longer is no slip of a known word. */
const MAX_SUGGESTED_FROM = 64

/**
 * The word of `words` nearest to `word` (case aside), when it is within a slip of it: one edit for
 * words of up to 4 characters, two up to 8, three beyond. Null when none is that close.
 */
export function nearestWord(word: string, words: readonly string[]): string | null {
  if (word.length > MAX_SUGGESTED_FROM) return null
  const allowed = word.length <= 4 ? 1 : word.length <= 8 ? 2 : 3
  let best: string | null = null
  let bestDistance = allowed + 1
  for (const candidate of words) {
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase())
    if (distance < bestDistance) {
      best = candidate
      bestDistance = distance
    }
  }
  return best
}

/**
 * Edits (insert, delete, replace, swap two neighbours) that turn `a` into `b`: the optimal string
 * alignment distance.
 */
function editDistance(a: string, b: string): number {
  let before: number[] = []
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const current = [i]
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let distance = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + cost,
      )
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        distance = Math.min(distance, (before[j - 2] as number) + 1)
      }
      current.push(distance)
    }
    before = previous
    previous = current
  }
  return previous[b.length] as number
}
