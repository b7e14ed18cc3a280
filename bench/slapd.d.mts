export const BASE: string
export const PEOPLE: string
export const GROUPS: string
export const SERVICE_DN: string
export const SERVICE_PASSWORD: string

/** The people of the test directory: name → password, groups, and whether the account is disabled. */
export const PEOPLE_OF_DIRECTORY: {
  readonly ada: { readonly password: string; readonly groups: readonly string[] }
  readonly dev: { readonly password: string; readonly groups: readonly string[] }
  readonly vic: { readonly password: string; readonly groups: readonly string[] }
  readonly mal: { readonly password: string; readonly groups: readonly string[] }
  readonly dis: { readonly password: string; readonly groups: readonly string[]; readonly disabled: true }
  readonly admin: { readonly password: string; readonly groups: readonly string[] }
}

/** Fails, saying what to install, where a program is missing. */
export function requireProgram(program: string, args: string[], pkg: string): void

export interface Slapd {
  /** `ldap://127.0.0.1:<port>` */
  url: string
  port: number
  dir: string
  /** With TLS: the test CA that signed slapd's certificate, and one that did not. */
  ca: string | null
  wrongCa: string | null
  /** Stops slapd (its data stays); connections are refused. */
  stop(): Promise<void>
  /** Starts it again on the same port, with the same data. */
  start(): Promise<void>
  /** SIGSTOP: it takes connections and answers nothing. */
  pause(): void
  resume(): void
  /** Stops it and removes its folder. */
  close(): Promise<void>
}

export function startSlapd(options?: { tls?: boolean }): Promise<Slapd>
