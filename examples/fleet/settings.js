// A stock Node-RED 4.1 instance of the fleet: its editor and admin API log in and check every
// token at flowadmin, through the helper `@flowadmin/node-red` installed in its userDir
// (`npm install /path/to/flowadmin-node-red-<version>.tgz` there, until the helper is published).
// In fleet mode its node modules are the ones flowadmin's console decides (the Fleet view lists the
// instance), and its audit events (deploys, logins) go to flowadmin's trail (the Activity view),
// both under its instance name.
//
//   FLOWADMIN_SECRET=fleet-demo-secret PORT=1881 node-red --userDir DIR --settings settings.js
//
// From the environment:
//   PORT                 the editor's port (default 1881)
//   FLOWADMIN_URL        flowadmin's address (default http://127.0.0.1:1880)
//   FLOWADMIN_SECRET     the secret of the resource server "fleet" at flowadmin (required)
//   FLOWADMIN_INSTANCE   the instance's name in the Fleet and Activity views (default
//                        editor-<PORT>)
//   FLOWADMIN_SSO_LABEL  when set, the editor signs people in through flowadmin and its identity
//                        provider ("Sign in with …") instead of its login form

const flowadmin = require('@flowadmin/node-red')

const port = Number(process.env.PORT ?? 1881)
const options = {
  url: process.env.FLOWADMIN_URL ?? 'http://127.0.0.1:1880',
  clientId: 'fleet',
  clientSecret: process.env.FLOWADMIN_SECRET,
  // The node modules flowadmin decides, applied through this Node-RED's own admin API.
  fleet: true,
  instanceId: process.env.FLOWADMIN_INSTANCE ?? `editor-${port}`,
}
if (process.env.FLOWADMIN_SSO_LABEL) {
  // This address, exactly as listed in the resource server's redirectUris at flowadmin.
  options.sso = {
    redirectUri: `http://127.0.0.1:${port}/auth/strategy/callback`,
    label: process.env.FLOWADMIN_SSO_LABEL,
  }
}

module.exports = {
  uiHost: '127.0.0.1',
  uiPort: port,
  flowFile: 'flows.json',
  credentialSecret: false,
  telemetry: { enabled: false },
  editorTheme: { tours: false },
  // Node-RED's audit events to flowadmin's trail, filed under this instance's fleet name.
  logging: {
    console: { level: 'info', metrics: false, audit: false },
    flowadmin: flowadmin.auditLogger(options),
  },
  // Logins and tokens checked at flowadmin; the editor's logout revokes its token there too.
  adminAuth: flowadmin.adminAuth(options),
  httpAdminMiddleware: flowadmin.httpAdminMiddleware(options),
}
