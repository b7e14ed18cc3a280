/** The form of `username`'s password grant (client service-admin) asking for `scope`. */
export const userGrant = (username: string, password: string, scope = '*'): URLSearchParams =>
  new URLSearchParams({ client_id: 'service-admin', grant_type: 'password', scope, username, password })

/** The form of admin's password grant (client service-admin, scope `*`) with `password`. */
export const passwordGrant = (password: string): URLSearchParams => userGrant('admin', password)

/** `username`'s password grant posted to the server at `url`: its response, as it came. */
export const logInAs = (url: string, username: string, password: string, scope = '*'): Promise<Response> =>
  fetch(`${url}/auth/token`, { method: 'POST', body: userGrant(username, password, scope) })

/** admin's password grant posted to the server at `url`: its response, as it came. */
export const logIn = (url: string, password: string): Promise<Response> => logInAs(url, 'admin', password)
