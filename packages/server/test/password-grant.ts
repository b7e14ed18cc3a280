/** The form of admin's password grant (client service-admin, scope `*`) with `password`. */
export const passwordGrant = (password: string): URLSearchParams =>
  new URLSearchParams({
    client_id: 'service-admin',
    grant_type: 'password',
    scope: '*',
    username: 'admin',
    password,
  })

/** admin's password grant posted to the server at `url`: its response, as it came. */
export const logIn = (url: string, password: string): Promise<Response> =>
  fetch(`${url}/auth/token`, { method: 'POST', body: passwordGrant(password) })
