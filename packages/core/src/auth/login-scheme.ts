/** The sign-in button of the identity provider, as Node-RED announces a strategy's. */
export interface StrategyButton {
  type: 'button'
  label: string
  /** Below the API's root: `/auth/strategy`. */
  url: string
}

/**
 * `{}` when the API is open; the credentials scheme when people log in with passwords (with an
 * `sso` button beside it when the identity provider is configured too); Node-RED's `strategy`
 * scheme with one button when only the identity provider is.
 */
export type LoginScheme =
  | Record<string, never>
  | {
      type: 'credentials'
      prompts: Array<{ id: 'username' | 'password'; type: 'text' | 'password'; label: string }>
      sso?: StrategyButton
    }
  | { type: 'strategy'; prompts: StrategyButton[] }

const CREDENTIALS_SCHEME: Extract<LoginScheme, { type: 'credentials' }> = {
  type: 'credentials',
  prompts: [
    { id: 'username', type: 'text', label: 'Username' },
    { id: 'password', type: 'password', label: 'Password' },
  ],
}

/**
 * The login scheme clients discover, given whether `adminAuth` is configured, the identity
 * provider's label (null without single sign-on) and whether flowadmin has users of its own.
 */
export function loginSchemeOf(authEnabled: boolean, provider: string | null, hasUsers: boolean): LoginScheme {
  if (!authEnabled) return {}
  if (provider === null) return CREDENTIALS_SCHEME
  const button: StrategyButton = { type: 'button', label: provider, url: '/auth/strategy' }
  return hasUsers ? { ...CREDENTIALS_SCHEME, sso: button } : { type: 'strategy', prompts: [button] }
}
