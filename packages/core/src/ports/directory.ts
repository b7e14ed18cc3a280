// The organisation's directory (LDAP, Active Directory), as the core needs it: who a person is,
// whether a password is theirs, and which groups they are in. The protocol (connections, TLS,
// filters, binds, the pool of connections and the time bound) is the adapter's; the core decides
// who gets which token.

/** An entry of the directory that names a person, as the core needs it. */
export interface DirectoryPerson {
  /**
   * The entry's own lasting identity (its `entryUUID`, its `objectGUID`, or its DN, as the
   * settings say): what the person's name and tokens follow, never their display name.
   */
  identity: string
  /** The name they sign in with and are known by here: the username attribute's value. */
  username: string
  /** The groups they are a member of: each group's DN and its name, as the settings' map may name them. */
  groups: string[]
  /** True when the directory marks the account disabled (Active Directory's `userAccountControl`). */
  disabled: boolean
}

/**
 * Why the directory gave no answer: it cannot be reached, or did not answer within its bound.
 * `message` is for the log and the audit; it never holds a password.
 */
export interface DirectoryFailure {
  message: string
}

export type DirectoryAnswer<T> = { ok: true; value: T } | { ok: false; error: DirectoryFailure }

export interface Directory {
  /**
   * Checks a person's password: finds the one entry named `username` (searched with the service
   * account), binds as that entry with `password`, and reads its groups (not those of a disabled
   * entry). null when no entry, or more than one, is named so, or the bind is refused; each of
   * those costs the same as the others (an unknown name is answered after a bind as a name that
   * does not exist), so the time of the answer tells nothing. Within the adapter's time bound.
   */
  authenticate(username: string, password: string): Promise<DirectoryAnswer<DirectoryPerson | null>>
  /**
   * The entry named `username` as it is now, with its groups, found with the service account
   * (no password): null when there is none, or more than one. Within the adapter's time bound.
   */
  find(username: string): Promise<DirectoryAnswer<DirectoryPerson | null>>
}
