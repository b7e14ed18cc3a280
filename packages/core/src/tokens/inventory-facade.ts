import { actorOf, type Principal } from '../auth/principal.js'
import type { CreateTokenRequest, InventoryCaller, TokenInventory } from './inventory.js'
import type { Tokens } from './tokens.js'

function callerOf(principal: Principal, address: string | null): InventoryCaller {
  return {
    username: principal.kind === 'user' ? principal.username : null,
    tokenId: principal.kind === 'user' ? principal.tokenId : null,
    permissions: principal.permissions,
    scope: principal.kind === 'user' ? (principal.scope ?? principal.permissions) : null,
    actor: actorOf(principal, address),
  }
}

/**
 * The session inventory and named API tokens, asked by a principal. The command line acts with
 * `operator`: every right, no user.
 */
export function createInventoryFacade(inventory: TokenInventory, tokens: Tokens) {
  return {
    list: (principal: Principal, user: string | null, address: string | null) =>
      inventory.list(callerOf(principal, address), user),
    revoke: (principal: Principal, id: string, address: string | null) =>
      inventory.revoke(callerOf(principal, address), id),
    revokeUser: (principal: Principal, user: string, address: string | null) =>
      inventory.revokeUser(callerOf(principal, address), user),
    create: (principal: Principal, request: CreateTokenRequest, address: string | null) =>
      inventory.create(callerOf(principal, address), request),
    /** Deletes the tokens of users no longer configured (one event per user); the server runs it at start. */
    purgeRemovedUsers: inventory.purgeRemovedUsers,
    /**
     * Gives tokens saved before tokens had an audience their client's (see
     * Tokens.settleAudiences); the server runs it at start. How many changed.
     */
    settleAudiences: () => tokens.settleAudiences(),
  }
}
