import type { Tokens } from '../tokens/tokens.js'

/**
 * Ends the person's sessions (not their API tokens) other than `keep` (a token id); how many
 * ended. What a change of their sign-in (a second factor, a passkey) does to sessions begun before it.
 */
export async function endOtherSessions(
  tokens: Tokens,
  username: string,
  keep: string | null,
): Promise<number> {
  let ended = 0
  for (const record of await tokens.list(username)) {
    if (record.kind !== 'session' || record.id === keep) continue
    const outcome = await tokens.revokeById(record.id, { username: null, permissions: ['*'] })
    if (outcome.revoked) ended++
  }
  return ended
}
