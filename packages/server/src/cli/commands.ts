// Every command of `flowadmin`: its name, usage, options, help and exit codes, one table each. The
// list of commands and every help text come from here; each command's code is loaded only when it
// runs (main.ts).
import { type CommandSpec, HELP_OPTION, SETTINGS_OPTION, USER_DIR_OPTION } from './usage.js'

/** The exit codes of a command that fails at run time when its database cannot be used. */
const STORE_EXIT_CODES =
  'Exit codes: 0 success, 1 run-time failure (unreadable database or file, PostgreSQL unreachable\n' +
  'or refusing), 2 usage or settings error.'

export const START = {
  name: 'start',
  usage: ['[options]'],
  summary: 'Start the admin API server',
  options: {
    settings: SETTINGS_OPTION,
    port: { short: 'p', value: 'N', text: 'port to listen on (overrides uiPort; 0 picks a free port)' },
    host: { value: 'H', text: 'address to listen on (overrides uiHost)' },
    'user-dir': USER_DIR_OPTION,
    'allow-open-admin': { text: 'allow listening on a non-loopback address without adminAuth' },
    demo: {
      text:
        "run the demo: the repository's examples/demo settings and userDir\n" +
        '(users admin / flowadmin-demo and viewer / flowadmin-view); no --settings',
    },
    pretty: {
      text: 'write the log for people to read, not JSON lines (the default when\nstandard error is a terminal)',
    },
    help: HELP_OPTION,
  },
  exitCodes:
    'Exit codes: 0 stopped on SIGINT or SIGTERM, 1 run-time failure (port in use, unreadable\n' +
    'database or file, PostgreSQL unreachable or refusing), 2 usage or settings error.',
} satisfies CommandSpec

export const HASH_PW = {
  name: 'hash-pw',
  usage: [''],
  summary: 'Read a password and print its argon2id hash, for adminAuth.users[].password',
  details: 'hash-pw reads the first line of standard input when it is piped, or prompts twice without echo.',
  options: { help: HELP_OPTION },
  exitCodes: 'Exit codes: 0 success, 2 empty password or passwords that differ, 130 interrupted prompt.',
} satisfies CommandSpec

export const MIGRATE = {
  name: 'migrate',
  usage: ['[options]'],
  summary: "Apply the store's schema migrations and exit (start applies them too)",
  details:
    'With "storage": "postgres", instances starting at once, or a migrate beside them, take turns\n' +
    'under an advisory lock.',
  options: { settings: SETTINGS_OPTION, 'user-dir': USER_DIR_OPTION, help: HELP_OPTION },
  exitCodes: STORE_EXIT_CODES,
} satisfies CommandSpec

export const MODULES = {
  name: 'modules',
  usage: ['forget NAME [options]'],
  summary: 'Drop the stored state (enabled flags) of a module that is gone for good',
  details:
    'The store is the one of the settings (SQLite in userDir, or PostgreSQL); it may run while the\n' +
    'server runs. A forgotten module that is still installed starts enabled at the next start.',
  options: { settings: SETTINGS_OPTION, 'user-dir': USER_DIR_OPTION, help: HELP_OPTION },
  exitCodes: STORE_EXIT_CODES,
} satisfies CommandSpec

/** The id `import-node-red`'s steps give a fleet of Node-RED instances, and this command's default. */
export const DEFAULT_RESOURCE_SERVER_ID = 'node-red'

export const SECRET = {
  name: 'secret',
  usage: ['[--id ID]'],
  summary: 'Make a resource server secret and print it with its entry for adminAuth.resourceServers',
  details: `Prints two lines on standard output, this once:

  1. the secret: 32 random bytes in base64url, for the resource server (e.g. FLOWADMIN_SECRET
     of the Node-RED instances); it is stored nowhere, so keep it there;
  2. the resource server's entry for adminAuth.resourceServers in flowadmin's settings, holding
     only the secret's SHA-256: {"id": "ID", "secret": "sha256:<64 hex digits>"}.

flowadmin compares a presented secret's SHA-256 with that digest in constant time; a right
secret is never throttled.`,
  options: {
    id: {
      value: 'ID',
      text: `the resource server's id in the entry (default ${DEFAULT_RESOURCE_SERVER_ID})`,
    },
    help: HELP_OPTION,
  },
  exitCodes: 'Exit codes: 0 success, 2 usage error (an id HTTP Basic cannot carry).',
} satisfies CommandSpec

export const TOKENS = {
  name: 'tokens',
  usage: [
    'list [--user U] [--json] --settings FILE',
    'revoke ID | --user U | --all --settings FILE',
    'create --user U --name N [--scope read] [--expires TIME] [--audience ID] --settings FILE',
  ],
  summary: 'List, revoke or create sessions and API tokens',
  details: `Works on the database directly, whether the server runs or not; a running server refuses a
revoked token on its next request. It reads the server's settings file (adminAuth, the store).

  list      Every unexpired session and API token, or those of user U.
  revoke    End one token by its id, every token of user U, or every token.
  create    Create a named API token for U and print it on standard output, this once. The scope
            defaults to U's permissions; --expires never only when
            adminAuth.apiTokens.allowNoExpiry is true. The token works where its audience is:
            flowadmin's API (the default), or one resource server alone.`,
  options: {
    settings: SETTINGS_OPTION,
    'user-dir': USER_DIR_OPTION,
    user: { value: 'U', text: "the user whose tokens are listed, revoked or created ('*': everyone)" },
    name: { value: 'N', text: 'create: the name of the API token' },
    scope: { value: 'SCOPE', text: "create: * or read (default: the user's permissions)" },
    expires: {
      value: 'TIME',
      text: 'create: a lifetime in s, m, h or d such as 3600s, 12h or 30d (default 90d), or never',
    },
    audience: {
      value: 'ID',
      text: "create: flowadmin (the default) or a resource server's id, the one place the token works",
    },
    json: { text: 'list: print JSON (the fields of GET /auth/tokens) instead of a table' },
    all: { text: 'revoke: every token of every user' },
    help: HELP_OPTION,
  },
  exitCodes:
    'Exit codes: 0 success, 1 no token with that id, or the database cannot be used,\n' +
    '2 usage or settings error, or a refused create (a scope or lifetime beyond the bounds,\n' +
    'an unknown user).',
} satisfies CommandSpec

export const MFA = {
  name: 'mfa',
  usage: ['reset USER --settings FILE'],
  summary: "Remove a person's second factor (when they lost it)",
  details: `Works on the database directly, whether the server runs or not. It reads the server's
settings file (adminAuth, the store).

  reset     Delete USER's TOTP secret, recovery codes and passkeys and end USER's sessions (API
            tokens stay); USER then signs in with the password alone and may enrol again.
            Audited as mfa.removed in the settings' audit file and the trail.`,
  options: {
    settings: SETTINGS_OPTION,
    'user-dir': USER_DIR_OPTION,
    help: HELP_OPTION,
  },
  exitCodes:
    'Exit codes: 0 removed, 1 USER has no second factor, or the database cannot be used,\n' +
    '2 usage or settings error.',
} satisfies CommandSpec

export const IMPORT_NODE_RED = {
  name: 'import-node-red',
  usage: ['SETTINGS_JS'],
  summary: 'Print flowadmin settings made from the adminAuth of a Node-RED settings.js',
  details: `Runs SETTINGS_JS in a node process of its own, as Node-RED would load it, and prints on
standard output flowadmin settings (JSON) with its adminAuth: the users with their bcrypt password
hashes as they are (flowadmin verifies them and warns at each start until they are replaced),
their permissions, sessionExpiryTime and default (what anyone gets without logging in).
Functions (users, authenticate, tokens, default) cannot be converted: each is named on standard
error and left out. Standard error also says how each Node-RED instance logs in at flowadmin
through @flowadmin/node-red. So: flowadmin import-node-red settings.js > flowadmin.json`,
  options: { help: HELP_OPTION },
  exitCodes:
    'Exit codes: 0 success, 2 usage error, or a SETTINGS_JS that is missing, fails when run, has no\n' +
    "adminAuth, or holds what flowadmin's settings refuse (nothing is printed on standard output then).",
} satisfies CommandSpec

export const INSTANCES = {
  name: 'instances',
  usage: [
    'enrol --resource-server ID [--uses N] [--expires TIME] [--instance ID] [--group G[,G…]] --settings FILE',
    'list [--json] --settings FILE',
    'revoke ID --settings FILE',
    'rotate ID --settings FILE',
  ],
  summary: "Enrol the fleet's Node-RED instances, list, revoke or rotate them",
  details: `Works on the database directly, whether the server runs or not, in fleet mode. It reads the
server's settings file (adminAuth, fleet, the store).

  enrol     Make an enrolment token and print it on standard output, this once: give it to one
            Node-RED instance's helper (or to N with --uses N), which exchanges it for a
            credential of its own. Audited as fleet.enrolment_created.
  list      Every instance with its enrolment (when, by whom, rotated, revoked).
  revoke    Refuse instance ID's credential from now on and end its editors' sessions.
  rotate    Ask instance ID to take a new secret at its next poll.`,
  options: {
    settings: SETTINGS_OPTION,
    'user-dir': USER_DIR_OPTION,
    'resource-server': {
      value: 'ID',
      text: 'enrol: the resource server marked for the fleet its instances join',
    },
    uses: { value: 'N', text: 'enrol: how many instances the token enrols, 1 to 1000 (default 1)' },
    expires: {
      value: 'TIME',
      text: 'enrol: its lifetime in s, m, h or d such as 600s, 1h or 7d, 60s to 7d (default 1h)',
    },
    instance: { value: 'ID', text: 'enrol: the instance id it enrols (only with --uses 1)' },
    group: { value: 'G', text: 'enrol: the groups its instances are to join, separated by commas' },
    json: { text: 'enrol, list: print JSON (the fields of the API) instead of text' },
    help: HELP_OPTION,
  },
  exitCodes:
    'Exit codes: 0 success, 1 no such instance, or the database cannot be used, 2 usage or\n' +
    'settings error (fleet mode off, a bound not kept).',
} satisfies CommandSpec

/** Every command, in the order the help lists them. */
export const COMMANDS: CommandSpec[] = [
  START,
  HASH_PW,
  SECRET,
  TOKENS,
  INSTANCES,
  MFA,
  MIGRATE,
  MODULES,
  IMPORT_NODE_RED,
]
