import { createHash } from 'node:crypto'
import { describe, expect, test } from 'vitest'
import type { StrategyAdminAuth } from '../index.js'
import { flowadmin } from './load.js'

const REDIRECT = 'https://nodered.example/auth/strategy/callback'
const good = {
  url: 'https://flowadmin.internal:1880',
  clientId: 'fleet',
  clientSecret: 'secret',
  sso: { redirectUri: REDIRECT, label: 'Sign in with Example ID' },
}

/** What a refused option says. */
function refusal(options: unknown): string {
  try {
    flowadmin.adminAuth(options as never)
  } catch (error) {
    return (error as Error).message
  }
  return 'accepted'
}

/** The strategy as Passport runs it: Node-RED's instance, with Passport's actions recorded. */
function strategyOf(adminAuth: StrategyAdminAuth) {
  const Strategy = adminAuth.strategy.strategy
  const strategy = new Strategy(adminAuth.strategy.options, () => {
    throw new Error('Node-RED’s verify must not be called: it would issue a session of its own')
  })
  const actions: Array<[string, unknown]> = []
  const run = (req: { query: Record<string, unknown>; session?: Record<string, unknown> }) => {
    const acting = Object.assign(Object.create(strategy), {
      redirect: (url: string) => actions.push(['redirect', url]),
      success: (user: unknown) => actions.push(['success', user]),
      error: (error: Error) => actions.push(['error', error.message]),
      fail: (challenge: unknown) => actions.push(['fail', challenge]),
    })
    acting.authenticate(req)
  }
  return { strategy, actions, run }
}

describe('the SSO mode', () => {
  test('gives Node-RED a strategy adminAuth: the button, the strategy, users and tokens', () => {
    const adminAuth = flowadmin.adminAuth(good)
    expect(adminAuth.type).toBe('strategy')
    expect(Object.keys(adminAuth).sort()).toEqual(['strategy', 'tokens', 'type', 'users'])
    expect(adminAuth.strategy).toMatchObject({
      name: 'flowadmin',
      label: 'Sign in with Example ID',
      options: {},
    })
    expect(strategyOf(adminAuth).strategy.name).toBe('flowadmin')
    expect(JSON.stringify(adminAuth)).not.toContain('secret')
  })

  test.each([
    [{ ...good, sso: {} }, 'sso.redirectUri is missing'],
    [{ ...good, sso: { redirectUri: '/auth/strategy/callback' } }, 'sso.redirectUri is not a valid URL'],
    [{ ...good, sso: { redirectUri: `${REDIRECT}#x` } }, 'without credentials or #fragment'],
    [{ ...good, sso: { redirectUri: REDIRECT, lable: 'x' } }, 'unknown option sso.lable'],
    [{ ...good, sso: { redirectUri: REDIRECT, label: '' } }, 'sso.label must be a non-empty string'],
    [{ ...good, sso: 'yes' }, 'sso must be an object'],
  ])('refuses bad sso options at start: %j', (options, message) => {
    expect(refusal(options)).toContain(message)
  })

  test('the button sends the browser to flowadmin’s /auth/authorize with PKCE S256, state kept in the session', () => {
    const adminAuth = flowadmin.adminAuth({ ...good, sso: { ...good.sso, url: 'https://flowadmin.example' } })
    const { actions, run } = strategyOf(adminAuth)
    const session: Record<string, unknown> = {}
    run({ query: {}, session })
    const [[action, location]] = actions as [[string, string]]
    expect(action).toBe('redirect')
    const url = new URL(location)
    expect(`${url.origin}${url.pathname}`).toBe('https://flowadmin.example/auth/authorize')
    const params = Object.fromEntries(url.searchParams)
    expect(params).toMatchObject({
      response_type: 'code',
      client_id: 'fleet',
      redirect_uri: REDIRECT,
      code_challenge_method: 'S256',
    })
    const pending = session.flowadminSignIns as Record<string, { verifier: string }>
    const verifier = pending[params.state as string]?.verifier as string
    expect(createHash('sha256').update(verifier).digest('base64url')).toBe(params.code_challenge)
  })

  test('a callback this browser did not start, one flowadmin refused, or one without a session: an error to show', () => {
    const { actions, run } = strategyOf(flowadmin.adminAuth(good))
    const session: Record<string, unknown> = {}
    run({ query: { code: 'a-code', state: 'forged' }, session })
    run({ query: {}, session })
    const state = new URL((actions[1] as [string, string])[1]).searchParams.get('state') as string
    run({ query: { error: 'access_denied', error_description: 'No permission here', state }, session })
    run({ query: { code: 'a-code', state } })
    expect(actions.filter(([action]) => action === 'error').map(([, message]) => message)).toEqual([
      'This sign-in was not started in this browser, was already used, or took too long: sign in again',
      'flowadmin refused the sign-in: No permission here',
      '@flowadmin/node-red: the sign-in needs the session Node-RED sets up for adminAuth.type "strategy"',
    ])
  })
})
