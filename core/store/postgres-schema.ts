import type pg from 'pg';
import { ERROR_CODES, OneWorksError } from '../errors.js';

/**
 * The versioned schema of the PostgreSQL store. Migration N (1-based) is `MIGRATIONS[N - 1]`;
 * a migration is never edited once released, a change is a new one appended. The database's
 * version is the one row of `one_works_schema`. `migrate` runs at every start, in one
 * transaction under an advisory lock (concurrent starts migrate once), and refuses a database
 * whose version is newer than this code (`state_schema_newer`), changing nothing.
 */

const MIGRATIONS: readonly string[] = [
  // 1: records, runs, events, request keys, the owner.
  `
  CREATE TABLE sessions (
    id text PRIMARY KEY,
    -- The record's createdAt (ISO 8601, UTC): listings are oldest first.
    created_at text NOT NULL,
    -- The session record without its runs (they are rows of runs).
    record json NOT NULL
  );
  CREATE INDEX sessions_created_at ON sessions (created_at COLLATE "C", id);
  CREATE TABLE runs (
    session_id text NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    -- The run's index in the session's runs (0 first).
    ordinal integer NOT NULL,
    id text NOT NULL,
    status text NOT NULL,
    started_at text,
    ended_at text,
    record json NOT NULL,
    PRIMARY KEY (session_id, ordinal)
  );
  CREATE INDEX runs_status ON runs (status);
  CREATE TABLE events (
    session_id text NOT NULL,
    seq bigint NOT NULL CHECK (seq > 0),
    key text NOT NULL,
    -- The stamped event, as appended (json keeps its text as written).
    event json NOT NULL,
    PRIMARY KEY (session_id, seq)
  );
  CREATE TABLE request_keys (
    key text PRIMARY KEY,
    args_hash text NOT NULL,
    -- 'handle' once the request took effect, 'pending' while it is being accepted.
    kind text NOT NULL CHECK (kind IN ('handle', 'pending')),
    value json NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
  );
  CREATE TABLE owner (
    only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row),
    record json NOT NULL
  );
  `,
  // 2: the fleet's queue of turns and its workers' leases.
  `
  CREATE TABLE workers (
    name text PRIMARY KEY,
    host text NOT NULL,
    pid integer NOT NULL,
    max_concurrent_runs integer NOT NULL CHECK (max_concurrent_runs > 0),
    started_at timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now(),
    lease_expires_at timestamptz NOT NULL,
    -- Bumped at every registration: a heartbeat of an older registration finds its lease lost.
    generation bigint NOT NULL DEFAULT 1
  );
  CREATE TABLE queue (
    id bigserial PRIMARY KEY,
    session_id text NOT NULL,
    run_id text NOT NULL UNIQUE,
    state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'claimed', 'done', 'unknown')),
    worker text REFERENCES workers (name),
    submitted_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    claimed_at timestamptz,
    ended_at timestamptz
  );
  CREATE INDEX queue_queued ON queue (id) WHERE state = 'queued';
  -- One live turn per session, whatever any worker does.
  CREATE UNIQUE INDEX queue_one_live_turn ON queue (session_id) WHERE state = 'claimed';
  `,
  // 3: fleet dispatch: turn requests (create | send) routed by approved roots and session HOMEs.
  `
  -- A request's run id is known once a worker's orchestrator accepted it.
  ALTER TABLE queue ALTER COLUMN run_id DROP NOT NULL;
  -- Run ids are a session's own (r1, r2, ...): unique per session, not across the fleet.
  ALTER TABLE queue DROP CONSTRAINT queue_run_id_key;
  CREATE UNIQUE INDEX queue_session_run ON queue (session_id, run_id);
  ALTER TABLE queue DROP CONSTRAINT queue_state_check;
  ALTER TABLE queue ADD CONSTRAINT queue_state_check CHECK (state IN ('queued', 'claimed', 'done', 'unknown', 'cancelled'));
  -- NULL: a bare turn of migration 2 (any worker may claim it).
  ALTER TABLE queue ADD COLUMN op text CHECK (op IN ('create', 'send'));
  -- The request as the client made it (CreateSessionRequest | SendMessageRequest), redacted of nothing: no secret goes in.
  ALTER TABLE queue ADD COLUMN request json;
  -- A create's canonical workspace, which a claiming worker's approved roots must contain.
  ALTER TABLE queue ADD COLUMN workspace text;
  -- {"handle": TurnHandle} once accepted, or {"error": {code, message, data}} when refused.
  ALTER TABLE queue ADD COLUMN result json;
  ALTER TABLE queue ADD COLUMN cancel_requested boolean NOT NULL DEFAULT false;
  CREATE INDEX queue_session ON queue (session_id, id);
  ALTER TABLE workers ADD COLUMN approved_roots text[] NOT NULL DEFAULT '{}';
  -- Which worker's state directory holds each session's HOME (its native state): its later turns go there.
  CREATE TABLE session_homes (
    session_id text PRIMARY KEY,
    worker text NOT NULL,
    since timestamptz NOT NULL DEFAULT now()
  );
  CREATE INDEX session_homes_worker ON session_homes (worker);
  `,
  // 4: a person's requests on a session (sessions reconcile, sessions resolve), run by the worker holding its HOME.
  `
  ALTER TABLE queue DROP CONSTRAINT queue_op_check;
  ALTER TABLE queue ADD CONSTRAINT queue_op_check CHECK (op IN ('create', 'send', 'reconcile', 'resolve'));
  `,
];

/** The schema version this code writes and reads. */
export const POSTGRES_SCHEMA_VERSION = MIGRATIONS.length;

/** Brings the database to {@link POSTGRES_SCHEMA_VERSION}; returns the version it found (0: empty). */
export async function migrate(client: pg.ClientBase, where: string): Promise<number> {
  await client.query('BEGIN');
  try {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', ['one-works:migrate']);
    await client.query(
      'CREATE TABLE IF NOT EXISTS one_works_schema (only_row boolean PRIMARY KEY DEFAULT true CHECK (only_row), version integer NOT NULL)',
    );
    const { rows } = await client.query<{ version: number }>('SELECT version FROM one_works_schema');
    const found = rows[0]?.version ?? 0;
    if (found > POSTGRES_SCHEMA_VERSION) {
      throw new OneWorksError(
        ERROR_CODES.STATE_SCHEMA_NEWER,
        `the state database ${where} has schema version ${found}, newer than this One Works understands (${POSTGRES_SCHEMA_VERSION}); upgrade One Works on this host (nothing was changed)`,
        { data: { database: where, found, supported: POSTGRES_SCHEMA_VERSION } },
      );
    }
    for (let version = found + 1; version <= POSTGRES_SCHEMA_VERSION; version++) {
      await client.query(MIGRATIONS[version - 1] as string);
    }
    if (found < POSTGRES_SCHEMA_VERSION) {
      await client.query(
        'INSERT INTO one_works_schema (only_row, version) VALUES (true, $1) ON CONFLICT (only_row) DO UPDATE SET version = EXCLUDED.version',
        [POSTGRES_SCHEMA_VERSION],
      );
    }
    await client.query('COMMIT');
    return found;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** The database's schema version without changing anything (0: no One Works schema yet). */
export async function readSchemaVersion(client: pg.ClientBase): Promise<number> {
  const { rows } = await client.query<{ version: number | null }>(
    "SELECT CASE WHEN to_regclass('one_works_schema') IS NULL THEN 0 END AS version",
  );
  if (rows[0]?.version === 0) return 0;
  const found = await client.query<{ version: number }>('SELECT version FROM one_works_schema');
  return found.rows[0]?.version ?? 0;
}
