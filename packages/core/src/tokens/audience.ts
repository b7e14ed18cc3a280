/**
 * The audience of a token for flowadmin's own API. Every other audience is one resource server's
 * id (a resource server may not be called `flowadmin`).
 */
export const FLOWADMIN_AUDIENCE = 'flowadmin'
