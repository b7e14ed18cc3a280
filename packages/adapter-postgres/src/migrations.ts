import type pg from 'pg'
import { PostgresStoreError } from './errors.js'

/**
 * The schema, one step per version: step `i` takes a database from version `i` to `i + 1`.
 * Append only; never edit a step that has shipped. Every table is prefixed `flowadmin_`, so the
 * database may hold other applications' tables too.
 */
export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE flowadmin_tokens (
    hash text PRIMARY KEY,          -- SHA-256 of the token, lowercase hex; the token is never stored
    id text NOT NULL UNIQUE,        -- public name of the record, unrelated to the token
    kind text NOT NULL CHECK (kind IN ('session', 'api')),
    name text,                      -- null for a session
    username text NOT NULL,
    client_id text NOT NULL,
    scope text[] NOT NULL,
    fingerprint text NOT NULL,
    created_at bigint NOT NULL,     -- ms since the epoch
    expires_at bigint,              -- null: never expires
    last_used_at bigint,
    last_address text
  );
  CREATE INDEX flowadmin_tokens_by_expiry ON flowadmin_tokens (expires_at);
  CREATE INDEX flowadmin_tokens_by_user ON flowadmin_tokens (username, created_at, id);
  CREATE INDEX flowadmin_tokens_by_creation ON flowadmin_tokens (created_at, id);

  CREATE TABLE flowadmin_modules (
    name text PRIMARY KEY,
    version text NOT NULL
  );
  CREATE TABLE flowadmin_node_sets (
    module text NOT NULL REFERENCES flowadmin_modules (name) ON DELETE CASCADE,
    name text NOT NULL,
    position integer NOT NULL,      -- discovery order within the module
    types text[] NOT NULL,
    enabled boolean NOT NULL,
    PRIMARY KEY (module, name)
  );

  CREATE TABLE flowadmin_throttle (
    key text PRIMARY KEY,
    count integer NOT NULL,         -- failures in the live window
    reset_at bigint NOT NULL,       -- ms since the epoch; the window ends here
    in_flight integer NOT NULL,     -- attempts admitted and not finished yet
    lease_until bigint NOT NULL     -- until when those count without news
  );
  CREATE INDEX flowadmin_throttle_by_reset ON flowadmin_throttle (reset_at);

  -- Username+address pairs that logged in, keyed by a digest of the pair.
  CREATE TABLE flowadmin_known_clients (
    key text PRIMARY KEY,
    expires_at bigint NOT NULL
  );
  CREATE INDEX flowadmin_known_clients_by_expiry ON flowadmin_known_clients (expires_at);
  `,
  `
  -- What asked for each token (a browser or tool, described in a few words), to tell them apart.
  ALTER TABLE flowadmin_tokens ADD COLUMN agent text;
  `,
  `
  -- Whom each token is for: 'flowadmin' or a resource server's id. Null for the tokens saved
  -- before: flowadmin gives them their client's audience at start.
  ALTER TABLE flowadmin_tokens ADD COLUMN audience text;
  `,
  `
  -- Single sign-on: the provider identity (a keyed hash of issuer and subject) each name belongs to.
  CREATE TABLE flowadmin_sso_names (
    username text PRIMARY KEY,
    identity text NOT NULL,
    bound_at bigint NOT NULL        -- ms since the epoch
  );
  -- Back-channel logout tokens seen (a keyed hash of issuer and jti), until they would be refused anyway.
  CREATE TABLE flowadmin_sso_logouts (
    key text PRIMARY KEY,
    expires_at bigint NOT NULL      -- ms since the epoch
  );
  CREATE INDEX flowadmin_sso_logouts_by_expiry ON flowadmin_sso_logouts (expires_at);
  `,
  `
  -- The trail: flowadmin's own audit events and those its instances report.
  CREATE TABLE flowadmin_trail (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    time bigint NOT NULL,           -- ms since the epoch, as the source says; seq orders the trail
    server text,                    -- the resource server that delivered it; null: flowadmin's own
    instance text,
    actor text,
    event text NOT NULL,
    outcome text NOT NULL CHECK (outcome IN ('success', 'failure')),
    address text,
    address_reported boolean NOT NULL,
    details json NOT NULL
  );
  CREATE INDEX flowadmin_trail_by_time ON flowadmin_trail (time);
  CREATE INDEX flowadmin_trail_by_actor ON flowadmin_trail (actor, seq);
  CREATE INDEX flowadmin_trail_by_source ON flowadmin_trail (server, instance, seq);
  `,
  `
  -- Single sign-on under way, shared by every instance. Sign-ins sent to the provider, keyed by
  -- the SHA-256 of the browser's binding cookie; each holds its PKCE verifier and nonce until it
  -- finishes or its 10 minutes end.
  CREATE TABLE flowadmin_sso_sign_ins (
    key text PRIMARY KEY,
    address text NOT NULL,          -- the client address (IPv6: its /64) the per-address bound counts
    sign_in text NOT NULL,          -- JSON: redirect URI, state, nonce, PKCE verifier, return path, authorization request
    expires_at bigint NOT NULL      -- ms since the epoch
  );
  CREATE INDEX flowadmin_sso_sign_ins_by_address ON flowadmin_sso_sign_ins (address, expires_at);
  CREATE INDEX flowadmin_sso_sign_ins_by_expiry ON flowadmin_sso_sign_ins (expires_at);
  -- One-time codes waiting for their exchange (30 s), keyed by the SHA-256 of the code.
  CREATE TABLE flowadmin_sso_codes (
    key text PRIMARY KEY,
    address text NOT NULL,
    client_id text,                 -- the resource server that may trade it; null: the console's code
    code text NOT NULL,             -- JSON: the binding's SHA-256, the person and their permissions, authorization request
    expires_at bigint NOT NULL
  );
  CREATE INDEX flowadmin_sso_codes_by_address ON flowadmin_sso_codes (address, expires_at);
  CREATE INDEX flowadmin_sso_codes_by_expiry ON flowadmin_sso_codes (expires_at);
  `,
  `
  -- The fleet: what each Node-RED instance reported of itself, and the modules installed or
  -- removed across it.
  CREATE TABLE flowadmin_fleet_instances (
    id text PRIMARY KEY,
    resource_server text NOT NULL,
    seen_at bigint NOT NULL,        -- ms since the epoch
    reported_at bigint,             -- null before the first report
    report jsonb                    -- null before the first report
  );
  CREATE TABLE flowadmin_fleet_installs (
    module text PRIMARY KEY,
    action text NOT NULL CHECK (action IN ('install', 'remove')),
    version text,
    at bigint NOT NULL
  );
  `,
  `
  -- People's TOTP factors: the secret sealed by flowadmin (encrypted, never in clear), and the
  -- last time step whose code was accepted, so that no code is accepted twice.
  CREATE TABLE flowadmin_totp_factors (
    username text PRIMARY KEY,
    secret text NOT NULL,
    created_at bigint NOT NULL,     -- ms since the epoch
    confirmed_at bigint,            -- ms since the epoch; null while the enrolment awaits a code
    last_step bigint
  );
  -- People's recovery codes, by hash; a used one is deleted.
  CREATE TABLE flowadmin_recovery_codes (
    username text NOT NULL,
    hash text NOT NULL,
    created_at bigint NOT NULL,     -- ms since the epoch
    PRIMARY KEY (username, hash)
  );
  -- Sign-ins whose password was right and whose second factor is awaited, by a hash of their
  -- ticket; each taken once.
  CREATE TABLE flowadmin_pending_signins (
    key text PRIMARY KEY,
    username text NOT NULL,
    client_id text NOT NULL,
    scope text[] NOT NULL,
    address text NOT NULL,
    agent text,
    created_at bigint NOT NULL,     -- ms since the epoch
    expires_at bigint NOT NULL      -- ms since the epoch
  );
  CREATE INDEX flowadmin_pending_signins_by_expiry ON flowadmin_pending_signins (expires_at);
  `,
  `
  -- How each session's person signed in: 'password', 'password_totp', 'password_recovery_code',
  -- 'passkey' or 'provider'. Null for API tokens and for the sessions saved before.
  ALTER TABLE flowadmin_tokens ADD COLUMN sign_in text;
  `,
  `
  -- People's passkeys: the public key of each (never a private key), its signature counter, which
  -- only grows, and its last use.
  CREATE TABLE flowadmin_passkeys (
    id text PRIMARY KEY,            -- the credential id, base64url
    username text NOT NULL,
    name text NOT NULL,
    public_key text NOT NULL,       -- COSE, base64url
    counter bigint NOT NULL,
    transports text[] NOT NULL,
    backed_up boolean NOT NULL,
    created_at bigint NOT NULL,     -- ms since the epoch
    last_used_at bigint             -- ms since the epoch; null before the first sign-in
  );
  CREATE INDEX flowadmin_passkeys_by_username ON flowadmin_passkeys (username, created_at);
  -- Challenges of passkey ceremonies, by a hash of the challenge; each taken once.
  CREATE TABLE flowadmin_passkey_challenges (
    key text PRIMARY KEY,
    purpose text NOT NULL CHECK (purpose IN ('register', 'sign_in')),
    username text,                  -- who registers; null for a sign-in
    expires_at bigint NOT NULL      -- ms since the epoch
  );
  CREATE INDEX flowadmin_passkey_challenges_by_expiry ON flowadmin_passkey_challenges (expires_at);
  `,
  `
  -- The client address (IPv6: its /64) a passkey sign-in's challenge was handed to, what the
  -- per-address bound counts; null for a registration's (and for the challenges saved before).
  ALTER TABLE flowadmin_passkey_challenges ADD COLUMN address text;
  CREATE INDEX flowadmin_passkey_challenges_by_address ON flowadmin_passkey_challenges (address, expires_at);
  `,
  `
  -- The trail keeps the time flowadmin received each event (what the age bound goes by) beside the
  -- time it claims, and whose budget it counts in: null for flowadmin's own, else the reporter
  -- whose report brought it, written as storedKey writes keys (a backslash as \\u005c). Events from
  -- before were received when they claim, as far as anyone knows, and count in their resource
  -- server's budget.
  ALTER TABLE flowadmin_trail ADD COLUMN received bigint;
  ALTER TABLE flowadmin_trail ADD COLUMN reporter text;
  UPDATE flowadmin_trail SET received = time, reporter = replace(server, '\\', '\\u005c');
  ALTER TABLE flowadmin_trail ALTER COLUMN received SET NOT NULL;
  CREATE INDEX flowadmin_trail_by_reporter ON flowadmin_trail (reporter, received, seq);
  -- Every reporter, and the time (ms since the epoch) up to which its allowance of events is spent.
  CREATE TABLE flowadmin_trail_reporters (
    reporter text PRIMARY KEY,
    spent_until double precision NOT NULL
  );
  INSERT INTO flowadmin_trail_reporters (reporter, spent_until)
    SELECT DISTINCT reporter, 0 FROM flowadmin_trail WHERE reporter IS NOT NULL;
  -- Tokens' usernames are written as storedKey writes keys, so that a NUL can be kept: the
  -- backslashes of those from before become \\u005c.
  UPDATE flowadmin_tokens SET username = replace(username, '\\', '\\u005c') WHERE strpos(username, '\\') > 0;
  `,
  `
  -- Sign-in challenges (a passkey's, a single sign-on's start) are carried by the browser,
  -- authenticated by one key that every instance on the database shares, made at its first use; a
  -- row is written only when a challenge is answered: spent, once, until its time ends. The tables
  -- of challenges and sign-ins saved at their start are gone (those under way start again).
  CREATE TABLE flowadmin_sign_in_key (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    key text NOT NULL,
    created_at bigint NOT NULL      -- ms since the epoch
  );
  CREATE TABLE flowadmin_spent_challenges (
    key text PRIMARY KEY,           -- a hash of the challenge's purpose and id
    expires_at bigint NOT NULL      -- ms since the epoch
  );
  CREATE INDEX flowadmin_spent_challenges_by_expiry ON flowadmin_spent_challenges (expires_at);
  DROP TABLE flowadmin_passkey_challenges;
  DROP TABLE flowadmin_sso_sign_ins;
  -- Whether a TOTP factor was confirmed during a sign-in (the policy asked the person to enrol
  -- there, with their password alone), shown to the person afterwards.
  ALTER TABLE flowadmin_totp_factors ADD COLUMN confirmed_at_sign_in boolean NOT NULL DEFAULT false;
  `,
  `
  -- The fleet's desired state has a revision, bumped in the transaction of each of its changes,
  -- and the settings the instances act on, one for every flowadmin sharing the database.
  CREATE TABLE flowadmin_fleet_state (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    revision bigint NOT NULL,
    prune boolean NOT NULL
  );
  INSERT INTO flowadmin_fleet_state (revision, prune) VALUES (1, false);
  -- Each instance's lease (ms since the epoch: in touch until then), whether it counted as
  -- connected when last looked at, and its latest report's sequence (null before one had any).
  ALTER TABLE flowadmin_fleet_instances ADD COLUMN lease_until bigint NOT NULL DEFAULT 0;
  ALTER TABLE flowadmin_fleet_instances ADD COLUMN connected boolean NOT NULL DEFAULT false;
  ALTER TABLE flowadmin_fleet_instances ADD COLUMN sequence bigint;
  CREATE INDEX flowadmin_fleet_instances_by_lease ON flowadmin_fleet_instances (lease_until) WHERE connected;
  -- The modules the instances reported, each noted once.
  CREATE TABLE flowadmin_fleet_reported (
    module text PRIMARY KEY,
    at bigint NOT NULL              -- ms since the epoch
  );
  `,
  `
  -- The exact tarball flowadmin installed for the fleet: its integrity (sha512-…) and its URL.
  ALTER TABLE flowadmin_fleet_installs ADD COLUMN integrity text;
  ALTER TABLE flowadmin_fleet_installs ADD COLUMN tarball text;
  `,
  `
  -- Enrolment tokens: kept by their SHA-256 only; each enrols up to uses instances.
  CREATE TABLE flowadmin_fleet_enrolments (
    id text PRIMARY KEY,            -- public name, unrelated to the token
    hash text NOT NULL UNIQUE,      -- SHA-256 of the token, lowercase hex
    resource_server text NOT NULL,
    uses integer NOT NULL,
    uses_left integer NOT NULL,
    created_at bigint NOT NULL,     -- ms since the epoch
    expires_at bigint NOT NULL,     -- ms since the epoch
    instance text,                  -- the instance id it enrols, or null
    groups jsonb NOT NULL,          -- array of group names
    created_by text                 -- username, or null (command line)
  );
  -- Each enrolled instance's credential: its secret's SHA-256, a rotation's waiting one.
  CREATE TABLE flowadmin_fleet_credentials (
    instance text PRIMARY KEY,
    resource_server text NOT NULL,
    secret_hash text NOT NULL,      -- '' for a record made by a revocation alone
    next_hash text,
    enrolled_at bigint NOT NULL,
    enrolled_by text,
    rotate_asked boolean NOT NULL DEFAULT false,
    rotated_at bigint,
    revoked_at bigint
  );
  CREATE INDEX flowadmin_fleet_credentials_live ON flowadmin_fleet_credentials (resource_server)
    WHERE revoked_at IS NULL;
  `,
  `
  -- Instances put in groups of instances over the API, besides the settings' rules.
  CREATE TABLE flowadmin_access_group_assignments (
    group_name text NOT NULL,
    instance text NOT NULL,
    assigned_by text,               -- username, or null (command line)
    assigned_at bigint NOT NULL,    -- ms since the epoch
    PRIMARY KEY (group_name, instance)
  );
  `,
  `
  -- Snapshots of flows: named, versioned per name, never changed once written.
  CREATE TABLE flowadmin_flow_snapshots (
    id text PRIMARY KEY,
    name text NOT NULL,
    version integer NOT NULL,       -- 1, then one more for each snapshot of the name
    modules text NOT NULL,          -- JSON array of {name, version}
    nodes integer NOT NULL,
    bytes integer NOT NULL,         -- the size of its file, as a download gives it
    created_by text,                -- username, or null (command line, open API)
    created_at bigint NOT NULL,     -- ms since the epoch
    flows text NOT NULL,            -- the flows array, as JSON text
    UNIQUE (name, version)
  );
  -- An operator's ask that an instance send the flows it runs, one an instance.
  CREATE TABLE flowadmin_fleet_snapshot_asks (
    instance text PRIMARY KEY,
    name text NOT NULL,
    asked_by text,                  -- username, or null (command line, open API)
    asked_at bigint NOT NULL        -- ms since the epoch
  );
  `,
  `
  -- Rollouts of snapshots to groups of instances, numbered in the order they were made. Who made
  -- one, why it ended, what an instance said, its revs, who set a variable and its value are
  -- written as storedKey writes keys, so that any text can be kept.
  CREATE TABLE flowadmin_fleet_rollouts (
    id text PRIMARY KEY,
    sequence integer NOT NULL UNIQUE, -- 1, then one more for each rollout
    group_name text NOT NULL,
    snapshot text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('rollout', 'rollback')),
    strategy text NOT NULL CHECK (strategy IN ('all', 'staged')),
    first integer,                  -- a staged rollout's first stage, else null
    instances text NOT NULL,        -- JSON array of instance ids, the first stage first
    released boolean NOT NULL,
    state text NOT NULL CHECK (state IN ('pending', 'running', 'succeeded', 'stopped', 'failed')),
    reason text,
    created_by text,                -- username, or null (command line, open API)
    created_at bigint NOT NULL,     -- ms since the epoch
    updated_at bigint NOT NULL      -- ms since the epoch
  );
  -- What each instance did with a rollout, the latest only.
  CREATE TABLE flowadmin_fleet_rollout_outcomes (
    rollout text NOT NULL,
    instance text NOT NULL,
    outcome text NOT NULL CHECK (outcome IN ('succeeded', 'failed')),
    rev text,
    message text,
    missing_credentials text NOT NULL, -- JSON array of node ids
    at bigint NOT NULL,             -- ms since the epoch
    PRIMARY KEY (rollout, instance)
  );
  -- Each instance's flows: the rollout it deployed last, the rev it runs, its drift (or nulls).
  CREATE TABLE flowadmin_fleet_instance_flows (
    instance text PRIMARY KEY,
    rollout text,
    deployed_rev text,
    rev text,
    drift_rev text,
    drift_by text,
    drift_at bigint,
    at bigint NOT NULL              -- ms since the epoch
  );
  -- Variables delivered with a deploy, set for a group's instances or for one instance.
  CREATE TABLE flowadmin_fleet_flow_variables (
    scope_kind text NOT NULL CHECK (scope_kind IN ('group', 'instance')),
    scope_name text NOT NULL,       -- the group's name or the instance's id
    name text NOT NULL,
    value text NOT NULL,            -- a secret's as sealed
    secret boolean NOT NULL,
    set_by text,                    -- username, or null (command line, open API)
    set_at bigint NOT NULL,         -- ms since the epoch
    PRIMARY KEY (scope_kind, scope_name, name)
  );
  -- Each group's flows mode; a group without a row reports.
  CREATE TABLE flowadmin_fleet_flow_modes (
    group_name text PRIMARY KEY,
    mode text NOT NULL CHECK (mode IN ('report', 'enforce'))
  );
  `,
]

/** The schema version this code writes. */
export const SCHEMA_VERSION: number = MIGRATIONS.length

/** The advisory lock key migrations hold: 'flowad' in ASCII, the same in every instance. */
export const MIGRATION_LOCK = 0x666c_6f77_6164

const VERSION_TABLE = `CREATE TABLE IF NOT EXISTS flowadmin_schema (
  only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  version integer NOT NULL
)`

/**
 * Brings the schema to SCHEMA_VERSION in one transaction, holding an advisory lock, so instances
 * starting at once apply each step exactly once. Refuses a newer schema without altering it.
 * Returns the versions before and after.
 */
export async function migrate(client: pg.ClientBase, target: string): Promise<{ from: number; to: number }> {
  await client.query('BEGIN')
  try {
    // Held until the transaction ends; a second instance waits here, then finds the work done.
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK])
    await client.query(VERSION_TABLE)
    const row = await client.query<{ version: number }>('SELECT version FROM flowadmin_schema')
    const from = row.rows[0]?.version ?? 0
    if (from > SCHEMA_VERSION) {
      throw new PostgresStoreError(
        'newer_schema',
        target,
        `the database at ${target} was written by a newer version (schema ${from}; this version knows up to ${SCHEMA_VERSION}). It was left untouched: upgrade flowadmin.`,
      )
    }
    for (const step of MIGRATIONS.slice(from)) await client.query(step)
    await client.query(
      `INSERT INTO flowadmin_schema (version) VALUES ($1)
       ON CONFLICT (only_row) DO UPDATE SET version = excluded.version`,
      [SCHEMA_VERSION],
    )
    await client.query('COMMIT')
    return { from, to: SCHEMA_VERSION }
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {})
    throw error
  }
}
