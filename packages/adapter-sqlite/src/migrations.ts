import type { SqliteDatabase } from './driver.js'
import { newerSchemaError } from './errors.js'
import { transactNow } from './transaction.js'

/**
 * The schema, one step per version: step `i` takes a database from version `i` to `i + 1`.
 * Append only; never edit a step that has shipped.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE tokens (
    hash TEXT PRIMARY KEY,
    username TEXT NOT NULL,
    client_id TEXT NOT NULL,
    scope TEXT NOT NULL,          -- JSON array of permissions
    created_at INTEGER NOT NULL,  -- ms since the epoch
    expires_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX tokens_by_expiry ON tokens (expires_at);
  CREATE INDEX tokens_by_user ON tokens (username);

  CREATE TABLE modules (
    name TEXT PRIMARY KEY,
    version TEXT NOT NULL
  ) WITHOUT ROWID;
  CREATE TABLE node_sets (
    module TEXT NOT NULL REFERENCES modules (name) ON DELETE CASCADE,
    name TEXT NOT NULL,
    position INTEGER NOT NULL,    -- discovery order within the module
    types TEXT NOT NULL,          -- JSON array of node types
    enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),
    PRIMARY KEY (module, name)
  ) WITHOUT ROWID;

  CREATE TABLE throttle (
    key TEXT PRIMARY KEY,
    count INTEGER NOT NULL,
    reset_at INTEGER NOT NULL     -- ms since the epoch; the window ends here
  ) WITHOUT ROWID;
  CREATE INDEX throttle_by_reset ON throttle (reset_at);
  `,
  // Tokens gain a public id, a kind and name, the fingerprint of the credential they were issued
  // against, and their last use. Tokens from before carry no fingerprint, so they cannot be
  // checked against their user's password: they end here, and their users log in again.
  `
  DROP TABLE tokens;
  CREATE TABLE tokens (
    hash TEXT PRIMARY KEY,
    id TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL CHECK (kind IN ('session', 'api')),
    name TEXT,                    -- null for a session
    username TEXT NOT NULL,
    client_id TEXT NOT NULL,
    scope TEXT NOT NULL,          -- JSON array of permissions
    fingerprint TEXT NOT NULL,
    created_at INTEGER NOT NULL,  -- ms since the epoch
    expires_at INTEGER,           -- null: never expires
    last_used_at INTEGER,
    last_address TEXT
  ) WITHOUT ROWID;
  CREATE INDEX tokens_by_expiry ON tokens (expires_at);
  CREATE INDEX tokens_by_user ON tokens (username, created_at, id);
  CREATE INDEX tokens_by_creation ON tokens (created_at, id);
  `,
  `
  -- Attempts admitted and not yet finished, and until when they count without news.
  ALTER TABLE throttle ADD COLUMN in_flight INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE throttle ADD COLUMN lease_until INTEGER NOT NULL DEFAULT 0;

  -- Username+address pairs that logged in, keyed by a digest of the pair.
  CREATE TABLE known_clients (
    key TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL   -- ms since the epoch
  ) WITHOUT ROWID;
  CREATE INDEX known_clients_by_expiry ON known_clients (expires_at);
  `,
  `
  -- What asked for each token (a browser or tool, described in a few words), to tell them apart.
  ALTER TABLE tokens ADD COLUMN agent TEXT;
  `,
  `
  -- Whom each token is for: 'flowadmin' or a resource server's id. Null for the tokens saved
  -- before: flowadmin gives them their client's audience at start.
  ALTER TABLE tokens ADD COLUMN audience TEXT;
  `,
  `
  -- Single sign-on: the provider identity (a keyed hash of issuer and subject) each name belongs to.
  CREATE TABLE sso_names (
    username TEXT PRIMARY KEY,
    identity TEXT NOT NULL,
    bound_at INTEGER NOT NULL     -- ms since the epoch
  ) WITHOUT ROWID;
  -- Back-channel logout tokens seen (a keyed hash of issuer and jti), until they would be refused anyway.
  CREATE TABLE sso_logouts (
    key TEXT PRIMARY KEY,
    expires_at INTEGER NOT NULL   -- ms since the epoch
  ) WITHOUT ROWID;
  CREATE INDEX sso_logouts_by_expiry ON sso_logouts (expires_at);
  `,
  `
  -- The trail: flowadmin's own audit events and those its instances report. seq is the rowid,
  -- so every index below also orders by it.
  CREATE TABLE trail (
    seq INTEGER PRIMARY KEY,
    time INTEGER NOT NULL,        -- ms since the epoch, as the source says; seq orders the trail
    server TEXT,                  -- the resource server that delivered it; null: flowadmin's own
    instance TEXT,
    actor TEXT,
    event TEXT NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('success', 'failure')),
    address TEXT,
    address_reported INTEGER NOT NULL CHECK (address_reported IN (0, 1)),
    details TEXT NOT NULL         -- a JSON object
  );
  CREATE INDEX trail_by_time ON trail (time);
  CREATE INDEX trail_by_actor ON trail (actor);
  CREATE INDEX trail_by_source ON trail (server, instance);
  `,
  `
  -- Single sign-on under way, shared by every process on the file. Sign-ins sent to the provider,
  -- keyed by the SHA-256 of the browser's binding cookie; each holds its PKCE verifier and nonce
  -- until it finishes or its 10 minutes end.
  CREATE TABLE sso_sign_ins (
    key TEXT PRIMARY KEY,
    address TEXT NOT NULL,        -- the client address (IPv6: its /64) the per-address bound counts
    sign_in TEXT NOT NULL,        -- JSON: redirect URI, state, nonce, PKCE verifier, return path, authorization request
    expires_at INTEGER NOT NULL   -- ms since the epoch
  ) WITHOUT ROWID;
  CREATE INDEX sso_sign_ins_by_address ON sso_sign_ins (address, expires_at);
  CREATE INDEX sso_sign_ins_by_expiry ON sso_sign_ins (expires_at);
  -- One-time codes waiting for their exchange (30 s), keyed by the SHA-256 of the code.
  CREATE TABLE sso_codes (
    key TEXT PRIMARY KEY,
    address TEXT NOT NULL,
    client_id TEXT,               -- the resource server that may trade it; null: the console's code
    code TEXT NOT NULL,           -- JSON: binding's SHA-256, the person and their permissions, authorization request
    expires_at INTEGER NOT NULL
  ) WITHOUT ROWID;
  CREATE INDEX sso_codes_by_address ON sso_codes (address, expires_at);
  CREATE INDEX sso_codes_by_expiry ON sso_codes (expires_at);
  `,
  `
  -- The fleet: what each Node-RED instance reported of itself, and the modules installed or
  -- removed across it.
  CREATE TABLE fleet_instances (
    id TEXT PRIMARY KEY,
    resource_server TEXT NOT NULL,
    seen_at INTEGER NOT NULL,     -- ms since the epoch
    reported_at INTEGER,          -- null before the first report
    report TEXT                   -- JSON, null before the first report
  ) WITHOUT ROWID;
  CREATE TABLE fleet_installs (
    module TEXT PRIMARY KEY,
    action TEXT NOT NULL CHECK (action IN ('install', 'remove')),
    version TEXT,
    at INTEGER NOT NULL
  ) WITHOUT ROWID;
  `,
  `
  -- People's TOTP factors: the secret sealed by flowadmin (encrypted, never in clear), and the
  -- last time step whose code was accepted, so that no code is accepted twice.
  CREATE TABLE totp_factors (
    username TEXT PRIMARY KEY,
    secret TEXT NOT NULL,
    created_at INTEGER NOT NULL,  -- ms since the epoch
    confirmed_at INTEGER,         -- ms since the epoch; null while the enrolment awaits a code
    last_step INTEGER
  ) WITHOUT ROWID;
  -- People's recovery codes, by hash; a used one is deleted.
  CREATE TABLE recovery_codes (
    username TEXT NOT NULL,
    hash TEXT NOT NULL,
    created_at INTEGER NOT NULL,  -- ms since the epoch
    PRIMARY KEY (username, hash)
  ) WITHOUT ROWID;
  -- Sign-ins whose password was right and whose second factor is awaited, by a hash of their
  -- ticket; each taken once.
  CREATE TABLE pending_signins (
    key TEXT PRIMARY KEY,
    username TEXT NOT NULL,
    client_id TEXT NOT NULL,
    scope TEXT NOT NULL,          -- a JSON array
    address TEXT NOT NULL,
    agent TEXT,
    created_at INTEGER NOT NULL,  -- ms since the epoch
    expires_at INTEGER NOT NULL   -- ms since the epoch
  ) WITHOUT ROWID;
  CREATE INDEX pending_signins_by_expiry ON pending_signins (expires_at);
  `,
  `
  -- How each session's person signed in: 'password', 'password_totp', 'password_recovery_code',
  -- 'passkey' or 'provider'. Null for API tokens and for the sessions saved before.
  ALTER TABLE tokens ADD COLUMN sign_in TEXT;
  `,
  `
  -- People's passkeys: the public key of each (never a private key), its signature counter, which
  -- only grows, and its last use.
  CREATE TABLE passkeys (
    id TEXT PRIMARY KEY,          -- the credential id, base64url
    username TEXT NOT NULL,
    name TEXT NOT NULL,
    public_key TEXT NOT NULL,     -- COSE, base64url
    counter INTEGER NOT NULL,
    transports TEXT NOT NULL,     -- a JSON array
    backed_up INTEGER NOT NULL,   -- 0 or 1
    created_at INTEGER NOT NULL,  -- ms since the epoch
    last_used_at INTEGER          -- ms since the epoch; null before the first sign-in
  ) WITHOUT ROWID;
  CREATE INDEX passkeys_by_username ON passkeys (username, created_at);
  -- Challenges of passkey ceremonies, by a hash of the challenge; each taken once.
  CREATE TABLE passkey_challenges (
    key TEXT PRIMARY KEY,
    purpose TEXT NOT NULL CHECK (purpose IN ('register', 'sign_in')),
    username TEXT,                -- who registers; null for a sign-in
    expires_at INTEGER NOT NULL   -- ms since the epoch
  ) WITHOUT ROWID;
  CREATE INDEX passkey_challenges_by_expiry ON passkey_challenges (expires_at);
  `,
  `
  -- The client address (IPv6: its /64) a passkey sign-in's challenge was handed to, what the
  -- per-address bound counts; null for a registration's (and for the challenges saved before).
  ALTER TABLE passkey_challenges ADD COLUMN address TEXT;
  CREATE INDEX passkey_challenges_by_address ON passkey_challenges (address, expires_at);
  `,
  `
  -- The trail keeps the time flowadmin received each event (what the age bound goes by) beside the
  -- time it claims, and whose budget it counts in: null for flowadmin's own, else the reporter
  -- whose report brought it. Events from before were received when they claim, as far as anyone
  -- knows, and count in their resource server's budget.
  ALTER TABLE trail ADD COLUMN received INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE trail ADD COLUMN reporter TEXT;
  UPDATE trail SET received = time, reporter = server;
  CREATE INDEX trail_by_reporter ON trail (reporter, received);
  -- Every reporter, and the time (ms since the epoch) up to which its allowance of events is spent.
  CREATE TABLE trail_reporters (
    reporter TEXT PRIMARY KEY,
    spent_until REAL NOT NULL
  ) WITHOUT ROWID;
  INSERT INTO trail_reporters (reporter, spent_until)
    SELECT DISTINCT reporter, 0 FROM trail WHERE reporter IS NOT NULL;
  `,
  `
  -- Sign-in challenges (a passkey's, a single sign-on's start) are carried by the browser,
  -- authenticated by one key that every process on the file shares, made at its first use; a row
  -- is written only when a challenge is answered: spent, once, until its time ends. The tables of
  -- challenges and sign-ins saved at their start are gone (those under way start again).
  CREATE TABLE sign_in_key (
    only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
    key TEXT NOT NULL,
    created_at INTEGER NOT NULL   -- ms since the epoch
  );
  CREATE TABLE spent_challenges (
    key TEXT PRIMARY KEY,         -- a hash of the challenge's purpose and id
    expires_at INTEGER NOT NULL   -- ms since the epoch
  ) WITHOUT ROWID;
  CREATE INDEX spent_challenges_by_expiry ON spent_challenges (expires_at);
  DROP TABLE passkey_challenges;
  DROP TABLE sso_sign_ins;
  -- Whether a TOTP factor was confirmed during a sign-in (the policy asked the person to enrol
  -- there, with their password alone): 0 or 1, shown to the person afterwards.
  ALTER TABLE totp_factors ADD COLUMN confirmed_at_sign_in INTEGER NOT NULL DEFAULT 0;
  `,
  `
  -- The fleet's desired state has a revision, bumped in the transaction of each of its changes,
  -- and the settings the instances act on, one for every flowadmin sharing the store.
  CREATE TABLE fleet_state (
    only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
    revision INTEGER NOT NULL,
    prune INTEGER NOT NULL CHECK (prune IN (0, 1))
  );
  INSERT INTO fleet_state (only_row, revision, prune) VALUES (1, 1, 0);
  -- Each instance's lease (ms since the epoch: in touch until then), whether it counted as
  -- connected when last looked at, and its latest report's sequence (null before one had any).
  ALTER TABLE fleet_instances ADD COLUMN lease_until INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE fleet_instances ADD COLUMN connected INTEGER NOT NULL DEFAULT 0 CHECK (connected IN (0, 1));
  ALTER TABLE fleet_instances ADD COLUMN sequence INTEGER;
  CREATE INDEX fleet_instances_by_lease ON fleet_instances (lease_until) WHERE connected = 1;
  -- The modules the instances reported, each noted once.
  CREATE TABLE fleet_reported (
    module TEXT PRIMARY KEY,
    at INTEGER NOT NULL           -- ms since the epoch
  ) WITHOUT ROWID;
  `,
  `
  -- The exact tarball flowadmin installed for the fleet: its integrity (sha512-…) and its URL.
  ALTER TABLE fleet_installs ADD COLUMN integrity TEXT;
  ALTER TABLE fleet_installs ADD COLUMN tarball TEXT;
  `,
  `
  -- Enrolment tokens: kept by their SHA-256 only; each enrols up to \`uses\` instances.
  CREATE TABLE fleet_enrolments (
    id TEXT PRIMARY KEY,          -- public name, unrelated to the token
    hash TEXT NOT NULL UNIQUE,    -- SHA-256 of the token, lowercase hex
    resource_server TEXT NOT NULL,
    uses INTEGER NOT NULL,
    uses_left INTEGER NOT NULL,
    created_at INTEGER NOT NULL,  -- ms since the epoch
    expires_at INTEGER NOT NULL,  -- ms since the epoch
    instance TEXT,                -- the instance id it enrols, or NULL
    groups TEXT NOT NULL,         -- JSON array of group names
    created_by TEXT               -- username, or NULL (command line)
  );
  -- Each enrolled instance's credential: its secret's SHA-256, a rotation's waiting one.
  CREATE TABLE fleet_credentials (
    instance TEXT PRIMARY KEY,
    resource_server TEXT NOT NULL,
    secret_hash TEXT NOT NULL,    -- '' for a record made by a revocation alone
    next_hash TEXT,
    enrolled_at INTEGER NOT NULL,
    enrolled_by TEXT,
    rotate_asked INTEGER NOT NULL DEFAULT 0 CHECK (rotate_asked IN (0, 1)),
    rotated_at INTEGER,
    revoked_at INTEGER
  ) WITHOUT ROWID;
  CREATE INDEX fleet_credentials_live ON fleet_credentials (resource_server) WHERE revoked_at IS NULL;
  `,
  `
  -- Instances put in groups of instances over the API, besides the settings' rules.
  CREATE TABLE access_group_assignments (
    group_name TEXT NOT NULL,
    instance TEXT NOT NULL,
    assigned_by TEXT,             -- username, or NULL (command line)
    assigned_at INTEGER NOT NULL, -- ms since the epoch
    PRIMARY KEY (group_name, instance)
  ) WITHOUT ROWID;
  `,
  `
  -- Snapshots of flows: named, versioned per name, never changed once written.
  CREATE TABLE flow_snapshots (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    version INTEGER NOT NULL,     -- 1, then one more for each snapshot of the name
    modules TEXT NOT NULL,        -- JSON array of {name, version}
    nodes INTEGER NOT NULL,
    bytes INTEGER NOT NULL,       -- the size of its file, as a download gives it
    created_by TEXT,              -- username, or NULL (command line, open API)
    created_at INTEGER NOT NULL,  -- ms since the epoch
    flows TEXT NOT NULL,          -- the flows array, as JSON text
    UNIQUE (name, version)
  );
  -- An operator's ask that an instance send the flows it runs, one an instance.
  CREATE TABLE fleet_snapshot_asks (
    instance TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    asked_by TEXT,                -- username, or NULL (command line, open API)
    asked_at INTEGER NOT NULL     -- ms since the epoch
  ) WITHOUT ROWID;
  `,
  `
  -- Rollouts of snapshots to groups of instances, numbered in the order they were made.
  CREATE TABLE fleet_rollouts (
    id TEXT PRIMARY KEY,
    sequence INTEGER NOT NULL UNIQUE, -- 1, then one more for each rollout
    group_name TEXT NOT NULL,
    snapshot TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('rollout', 'rollback')),
    strategy TEXT NOT NULL CHECK (strategy IN ('all', 'staged')),
    first INTEGER,                -- a staged rollout's first stage, else NULL
    instances TEXT NOT NULL,      -- JSON array of instance ids, the first stage first
    released INTEGER NOT NULL CHECK (released IN (0, 1)),
    state TEXT NOT NULL CHECK (state IN ('pending', 'running', 'succeeded', 'stopped', 'failed')),
    reason TEXT,
    created_by TEXT,              -- username, or NULL (command line, open API)
    created_at INTEGER NOT NULL,  -- ms since the epoch
    updated_at INTEGER NOT NULL   -- ms since the epoch
  );
  -- What each instance did with a rollout, the latest only.
  CREATE TABLE fleet_rollout_outcomes (
    rollout TEXT NOT NULL,
    instance TEXT NOT NULL,
    outcome TEXT NOT NULL CHECK (outcome IN ('succeeded', 'failed')),
    rev TEXT,
    message TEXT,
    missing_credentials TEXT NOT NULL, -- JSON array of node ids
    at INTEGER NOT NULL,          -- ms since the epoch
    PRIMARY KEY (rollout, instance)
  ) WITHOUT ROWID;
  -- Each instance's flows: the rollout it deployed last, the rev it runs, its drift (or NULLs).
  CREATE TABLE fleet_instance_flows (
    instance TEXT PRIMARY KEY,
    rollout TEXT,
    deployed_rev TEXT,
    rev TEXT,
    drift_rev TEXT,
    drift_by TEXT,
    drift_at INTEGER,
    at INTEGER NOT NULL           -- ms since the epoch
  ) WITHOUT ROWID;
  -- Variables delivered with a deploy, set for a group's instances or for one instance.
  CREATE TABLE fleet_flow_variables (
    scope_kind TEXT NOT NULL CHECK (scope_kind IN ('group', 'instance')),
    scope_name TEXT NOT NULL,     -- the group's name or the instance's id
    name TEXT NOT NULL,
    value TEXT NOT NULL,          -- a secret's as sealed
    secret INTEGER NOT NULL CHECK (secret IN (0, 1)),
    set_by TEXT,                  -- username, or NULL (command line, open API)
    set_at INTEGER NOT NULL,      -- ms since the epoch
    PRIMARY KEY (scope_kind, scope_name, name)
  ) WITHOUT ROWID;
  -- Each group's flows mode; a group without a row reports.
  CREATE TABLE fleet_flow_modes (
    group_name TEXT PRIMARY KEY,
    mode TEXT NOT NULL CHECK (mode IN ('report', 'enforce'))
  ) WITHOUT ROWID;
  `,
]

/** The schema version this code writes, recorded in `PRAGMA user_version`. */
export const SCHEMA_VERSION: number = MIGRATIONS.length

export function readUserVersion(db: SqliteDatabase): number {
  const row = db.prepare('PRAGMA user_version').get() as { user_version: number | bigint }
  return Number(row.user_version)
}

/**
 * Brings the schema to SCHEMA_VERSION in one transaction; does nothing (and writes nothing) when
 * it is there already. Refuses a newer schema without altering it.
 */
export function migrate(db: SqliteDatabase, path: string): void {
  const before = readUserVersion(db)
  if (before === SCHEMA_VERSION) return
  if (before > SCHEMA_VERSION) throw newerSchemaError(path, before, SCHEMA_VERSION)
  transactNow(db, () => {
    // Read again under the write lock: another process may have migrated in the meantime.
    const current = readUserVersion(db)
    if (current > SCHEMA_VERSION) throw newerSchemaError(path, current, SCHEMA_VERSION)
    for (const step of MIGRATIONS.slice(current)) db.exec(step)
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION}`)
  })
}
