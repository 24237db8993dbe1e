import { randomBytes } from 'node:crypto';
import { rename, rm } from 'node:fs/promises';
import path from 'node:path';
import pg from 'pg';
import { ERROR_CODES, OneWorksError, isOneWorksError } from '../errors.js';
import { RuntimeEventSchema, type RuntimeEvent } from '../events/index.js';
import { checkedEvent } from './checked-event.js';
import { directorySize } from './dir-size.js';
import { migrate, readSchemaVersion } from './postgres-schema.js';
import { postgresUrlSecrets, postgresWhere } from './postgres-url.js';
import { OwnerRecordSchema, SessionRecordSchema, type OwnerRecord, type SessionRecord } from './records.js';
import { assertSessionId, sessionDir } from './state-layout.js';
import type { CorruptSession, EventIndex, FollowOptions, OwnerClaim, ReadEventsOptions, SessionScan, Store } from './store.js';

export interface PostgresStoreOptions {
  /** `postgres://user:password@host:port/database`: a secret, never put in a message. */
  url: string;
  /**
   * The local state directory whose `sessions/<id>` folders (session HOMEs) `removeSession`
   * deletes with the rows; absent: rows only.
   */
  stateDir?: string;
  /** Longest wait of `followEvents` between reads when no notification comes, in ms (default 1000). */
  followPollMs?: number;
  /** Connections in the pool (default 4). */
  poolSize?: number;
  /** Migrate the schema at start (default true); false only connects (for a read-only check such as `doctor`). */
  migrate?: boolean;
  /**
   * How long a store operation (record, event, request-key reads and writes) retries while the
   * database cannot be reached (a restart), in ms; default 0: it fails at once with
   * `state_unavailable`. A fleet worker retries, so a turn survives a database restart.
   */
  retryUnavailableMs?: number;
  /** Called with a (scrubbed) message when an idle connection fails; default: ignored (the next query reconnects). */
  onConnectionError?: (message: string) => void;
}

/** The channel on which appends notify followers; the payload is the session id. */
export const EVENTS_CHANNEL = 'one_works_events';

const DEFAULT_FOLLOW_POLL_MS = 1000;
// Events read per query while following, so a large backlog is consumed in pieces.
const FOLLOW_BATCH = 1000;
const CONNECT_TIMEOUT_MS = 10_000;
// The advisory lock key of the single owner (hashtext of a fixed name).
const OWNER_LOCK = 'one-works:owner';

/** A request key's durable claim, as the PostgreSQL store keeps it. */
export interface StoredRequestKey {
  key: string;
  argsHash: string;
  kind: 'handle' | 'pending';
  value: unknown;
}

/**
 * Opens the PostgreSQL store at `options.url`: connects, migrates the schema (refused with
 * `state_schema_newer` when the database is newer than this code) and returns the store. A
 * database that cannot be reached is `state_unavailable`; no message holds the URL's password.
 */
export async function createPostgresStore(options: PostgresStoreOptions): Promise<PostgresStore> {
  const store = new PostgresStore(options);
  try {
    await store.withClient((client) => (options.migrate === false ? readSchemaVersion(client) : migrate(client, store.where)));
  } catch (error) {
    await store.close();
    throw error;
  }
  return store;
}

/**
 * The Store on PostgreSQL (see core/store/postgres-schema.ts for the tables): a session record
 * is one row of `sessions` plus one row per run in `runs`, written in one transaction; events
 * are rows of `events` keyed by (session, seq), so a seq is never written twice; an append
 * notifies `one_works_events` in its transaction, and followers wake on it (LISTEN), with a
 * bounded poll as a fallback. The single owner is a session-level advisory lock held by a
 * dedicated connection (a crashed owner's lock goes with its connection) plus an `owner` row
 * that says who holds it (a row left by a crashed owner makes the next claim `recovered`).
 */
export class PostgresStore implements Store {
  /** `host:port/database` of the URL: how messages name the database. */
  readonly where: string;
  readonly #options: PostgresStoreOptions;
  readonly #config: pg.ClientConfig;
  readonly #pool: pg.Pool;
  readonly #secrets: string[];
  readonly #notifier: EventNotifier;
  // Notifiers of other channels (the fleet's queue), by channel, opened on first use.
  readonly #channels = new Map<string, EventNotifier>();
  readonly #appends = new Map<string, Promise<void>>();
  #owner: { client: pg.Client; record: OwnerRecord } | undefined;
  #closed = false;

  constructor(options: PostgresStoreOptions) {
    this.#options = options;
    this.where = postgresWhere(options.url);
    this.#secrets = postgresUrlSecrets(options.url);
    this.#config = { connectionString: options.url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS };
    this.#pool = new pg.Pool({ ...this.#config, max: options.poolSize ?? 4, idleTimeoutMillis: 10_000 });
    // An idle connection that dies (server restart) must not crash the process: the next query reconnects.
    this.#pool.on('error', (error) => options.onConnectionError?.(this.#scrub(error.message)));
    this.#notifier = new EventNotifier(this.#config, EVENTS_CHANNEL, (error) => options.onConnectionError?.(this.#scrub(error.message)));
  }

  /**
   * Calls `wake` with the payload of every notification on `channel` (LISTEN on a connection of
   * its own, shared by the channel's listeners); after the connection broke and came back, with
   * no payload (notifications may have been missed meanwhile: read again). Returns the function
   * that stops listening.
   */
  listen(channel: string, wake: (payload: string | undefined) => void): () => void {
    if (!/^[a-z_]+$/.test(channel)) throw new OneWorksError(ERROR_CODES.INTERNAL, `not a channel name: ${channel}`);
    let notifier = this.#channels.get(channel);
    if (!notifier) {
      notifier = new EventNotifier(this.#config, channel, (error) => this.#options.onConnectionError?.(this.#scrub(error.message)));
      this.#channels.set(channel, notifier);
    }
    return notifier.subscribe(ANY_PAYLOAD, wake);
  }

  /** Runs `work` on one pooled connection; connection failures become `state_unavailable`. */
  async withClient<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect().catch((error: unknown) => {
      throw this.#failure(error);
    });
    let broken = false;
    // A checked-out connection has no listener of the pool's: one that fails between two
    // queries (a server restarting) would crash the process with an unhandled 'error' event.
    const onError = (): void => {
      broken = true;
    };
    client.on('error', onError);
    try {
      return await work(client);
    } catch (error) {
      broken ||= isConnectionFailure(error);
      throw this.#failure(error);
    } finally {
      client.off('error', onError);
      client.release(broken);
    }
  }

  async acquireOwner(owner: OwnerRecord): Promise<OwnerClaim> {
    if (this.#owner) throw new OneWorksError(ERROR_CODES.STATE_LOCKED, `this process already owns the state database ${this.where}`);
    const client = new pg.Client(this.#config);
    client.on('error', () => undefined);
    try {
      await client.connect();
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [OWNER_LOCK]);
      const current = await this.#readOwnerRow(client);
      if (rows[0]?.locked !== true) {
        const who = current ? `pid ${current.pid} on ${current.host} (since ${current.startedAt})` : 'another process';
        throw new OneWorksError(ERROR_CODES.STATE_LOCKED, `the state database ${this.where} is owned by ${who}`, {
          data: { database: this.where, owner: current },
        });
      }
      await client.query(
        'INSERT INTO owner (only_row, record) VALUES (true, $1) ON CONFLICT (only_row) DO UPDATE SET record = EXCLUDED.record',
        [JSON.stringify(owner)],
      );
      this.#owner = { client, record: owner };
      return current ? { recovered: true, previous: current } : { recovered: false };
    } catch (error) {
      await client.end().catch(() => undefined);
      throw this.#failure(error);
    }
  }

  async releaseOwner(): Promise<void> {
    const owner = this.#owner;
    if (!owner) return;
    this.#owner = undefined;
    try {
      await owner.client.query('DELETE FROM owner');
      await owner.client.query('SELECT pg_advisory_unlock(hashtext($1))', [OWNER_LOCK]);
    } catch (error) {
      // The connection is gone, and the lock with it; the row stays for the next owner to recover.
      if (!isConnectionFailure(error)) throw this.#failure(error);
    } finally {
      await owner.client.end().catch(() => undefined);
    }
  }

  async hasSession(sessionId: string): Promise<boolean> {
    assertSessionId(sessionId);
    const { rowCount } = await this.#query('SELECT 1 FROM sessions WHERE id = $1', [sessionId]);
    return (rowCount ?? 0) > 0;
  }

  async writeSession(record: SessionRecord): Promise<void> {
    assertSessionId(record.id);
    const parsed = SessionRecordSchema.safeParse(record);
    if (!parsed.success) {
      throw new OneWorksError(
        ERROR_CODES.INTERNAL,
        `refusing to write an invalid record for session ${record.id}: ${parsed.error.message}`,
        {
          data: { sessionId: record.id },
          cause: parsed.error,
        },
      );
    }
    const { runs, ...rest } = parsed.data;
    await this.#transaction(async (client) => {
      await client.query(
        'INSERT INTO sessions (id, created_at, record) VALUES ($1, $2, $3) ON CONFLICT (id) DO UPDATE SET created_at = EXCLUDED.created_at, record = EXCLUDED.record',
        [rest.id, rest.createdAt, JSON.stringify(rest)],
      );
      await client.query('DELETE FROM runs WHERE session_id = $1', [rest.id]);
      if (runs.length === 0) return;
      await client.query(
        `INSERT INTO runs (session_id, ordinal, id, status, started_at, ended_at, record)
         SELECT $1, r.n - 1, r.value->>'id', r.value->>'status', r.value->>'startedAt', r.value->>'endedAt', r.value
         FROM json_array_elements($2::json) WITH ORDINALITY AS r(value, n)`,
        [rest.id, JSON.stringify(runs)],
      );
    });
  }

  async readSession(sessionId: string): Promise<SessionRecord> {
    assertSessionId(sessionId);
    const { rows } = await this.#query<SessionRow>(`${SELECT_SESSIONS} WHERE s.id = $1`, [sessionId]);
    const row = rows[0];
    if (!row) {
      throw new OneWorksError(ERROR_CODES.SESSION_NOT_FOUND, `no session ${sessionId} in the state database ${this.where}`, {
        data: { sessionId },
      });
    }
    const parsed = this.#parseSession(row);
    if (!parsed.ok) throw this.#corruptRecord(sessionId, parsed.reason, parsed.cause);
    return parsed.record;
  }

  async listSessions(): Promise<SessionRecord[]> {
    return (await this.scanSessions()).records;
  }

  async scanSessions(): Promise<SessionScan> {
    const { rows } = await this.#query<SessionRow>(`${SELECT_SESSIONS} ORDER BY s.created_at COLLATE "C", s.id`);
    const records: SessionRecord[] = [];
    const corrupt: CorruptSession[] = [];
    for (const row of rows) {
      const parsed = this.#parseSession(row);
      if (parsed.ok) records.push(parsed.record);
      else corrupt.push({ sessionId: row.id, file: this.#recordName(row.id), reason: parsed.reason });
    }
    corrupt.sort((a, b) => a.sessionId.localeCompare(b.sessionId));
    return { records, corrupt };
  }

  async removeSession(sessionId: string): Promise<number> {
    assertSessionId(sessionId);
    const rowBytes = await this.#transaction(async (client) => {
      const removed = await client.query<{ bytes: string }>(
        `SELECT octet_length(s.record::text) + coalesce((SELECT sum(octet_length(r.record::text)) FROM runs r WHERE r.session_id = s.id), 0) AS bytes
         FROM sessions s WHERE s.id = $1 FOR UPDATE`,
        [sessionId],
      );
      if (removed.rows.length === 0) {
        throw new OneWorksError(ERROR_CODES.SESSION_NOT_FOUND, `no session ${sessionId} in the state database ${this.where}`, {
          data: { sessionId },
        });
      }
      const events = await client.query<{ bytes: string | null }>(
        'WITH gone AS (DELETE FROM events WHERE session_id = $1 RETURNING octet_length(event::text) AS n) SELECT sum(n) AS bytes FROM gone',
        [sessionId],
      );
      await client.query('DELETE FROM sessions WHERE id = $1', [sessionId]);
      return Number(removed.rows[0]?.bytes ?? 0) + Number(events.rows[0]?.bytes ?? 0);
    });
    return rowBytes + (await this.#removeLocalFolder(sessionId));
  }

  async appendEvents(sessionId: string, events: readonly RuntimeEvent[]): Promise<void> {
    assertSessionId(sessionId);
    // Everything up to the chaining is synchronous, so batches are chained in call order.
    const checked = events.map((event) => checkedEvent(sessionId, event));
    if (checked.length === 0) return;
    const append = async (): Promise<void> => {
      try {
        // A retry after a lost connection may find its batch committed already (the reply was
        // lost): the same rows, which it then leaves as they are.
        await this.#retrying((attempt) =>
          this.#queryOnce(
            `WITH inserted AS (
             INSERT INTO events (session_id, seq, key, event)
             SELECT $1, e.seq, e.key, e.event FROM unnest($2::bigint[], $3::text[], $4::json[]) AS e(seq, key, event)
             ${attempt === 0 ? '' : 'ON CONFLICT (session_id, seq) DO NOTHING'}
             RETURNING 1)
           SELECT pg_notify($5, $1) WHERE EXISTS (SELECT 1 FROM inserted)`,
            [sessionId, checked.map((e) => e.seq), checked.map((e) => e.key), checked.map((e) => JSON.stringify(e)), EVENTS_CHANNEL],
          ),
        );
      } catch (error) {
        if ((error as { cause?: { code?: string } }).cause?.code === UNIQUE_VIOLATION) {
          throw new OneWorksError(
            ERROR_CODES.INTERNAL,
            `refusing to append to session ${sessionId}: an event with one of seq ${checked.map((e) => e.seq).join(', ')} is already recorded`,
            { data: { sessionId }, cause: error },
          );
        }
        throw error;
      }
    };
    const next = (this.#appends.get(sessionId) ?? Promise.resolve()).then(append);
    this.#appends.set(
      sessionId,
      next.catch(() => undefined),
    );
    return next;
  }

  async readEvents(sessionId: string, options: ReadEventsOptions = {}): Promise<RuntimeEvent[]> {
    const events = await this.#readAfter(sessionId, options.afterSeq ?? 0);
    const { types } = options;
    return types ? events.filter((event) => types.includes(event.type)) : events;
  }

  async *followEvents(sessionId: string, options: FollowOptions = {}): AsyncIterable<RuntimeEvent> {
    assertSessionId(sessionId);
    const { signal } = options;
    const pollMs = this.#options.followPollMs ?? DEFAULT_FOLLOW_POLL_MS;
    let last = options.afterSeq ?? 0;
    const wake = new Latch();
    const unsubscribe = this.#notifier.subscribe(sessionId, () => wake.set());
    try {
      while (!signal?.aborted && !this.#closed) {
        wake.clear();
        let batch: RuntimeEvent[];
        try {
          batch = await this.#readAfter(sessionId, last, FOLLOW_BATCH);
        } catch (error) {
          // The database restarting is a pause, not the end: read again once it answers.
          if (!isOneWorksError(error, ERROR_CODES.STATE_UNAVAILABLE)) throw error;
          await wake.wait(pollMs, signal);
          continue;
        }
        for (const event of batch) {
          last = event.seq;
          yield event;
          if (signal?.aborted) return;
        }
        if (batch.length < FOLLOW_BATCH) {
          this.#notifier.listen();
          await wake.wait(pollMs, signal);
        }
      }
    } finally {
      unsubscribe();
    }
  }

  async eventIndex(sessionId: string): Promise<EventIndex> {
    assertSessionId(sessionId);
    const { rows } = await this.#query<{ key: string; seq: string }>('SELECT key, seq FROM events WHERE session_id = $1', [sessionId]);
    const keys = new Set<string>();
    let lastSeq = 0;
    for (const row of rows) {
      keys.add(row.key);
      lastSeq = Math.max(lastSeq, Number(row.seq));
    }
    return { keys, lastSeq };
  }

  /** Every request key's claim. */
  async loadRequestKeys(): Promise<StoredRequestKey[]> {
    const { rows } = await this.#query<{ key: string; args_hash: string; kind: 'handle' | 'pending'; value: unknown }>(
      'SELECT key, args_hash, kind, value FROM request_keys ORDER BY key',
    );
    return rows.map((row) => ({ key: row.key, argsHash: row.args_hash, kind: row.kind, value: row.value }));
  }

  /** Makes one claim durable, replacing the key's previous one. */
  async saveRequestKey(claim: StoredRequestKey): Promise<void> {
    await this.#query(
      `INSERT INTO request_keys (key, args_hash, kind, value) VALUES ($1, $2, $3, $4)
       ON CONFLICT (key) DO UPDATE SET args_hash = EXCLUDED.args_hash, kind = EXCLUDED.kind, value = EXCLUDED.value, updated_at = now()`,
      [claim.key, claim.argsHash, claim.kind, JSON.stringify(claim.value ?? null)],
    );
  }

  /** Forgets a key's claim. */
  async removeRequestKey(key: string): Promise<void> {
    await this.#query('DELETE FROM request_keys WHERE key = $1', [key]);
  }

  /** Releases ownership, stops followers and closes every connection. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.releaseOwner().catch(() => undefined);
    await this.#notifier.close();
    await Promise.all([...this.#channels.values()].map((notifier) => notifier.close()));
    await this.#pool.end().catch(() => undefined);
  }

  async #readAfter(sessionId: string, afterSeq: number, limit?: number): Promise<RuntimeEvent[]> {
    assertSessionId(sessionId);
    const { rows } = await this.#query<{ seq: string; event: unknown }>(
      `SELECT seq, event FROM events WHERE session_id = $1 AND seq > $2 ORDER BY seq${limit === undefined ? '' : ` LIMIT ${limit}`}`,
      [sessionId, afterSeq],
    );
    return rows.map((row) => {
      const parsed = RuntimeEventSchema.safeParse(row.event);
      if (!parsed.success) {
        throw new OneWorksError(
          ERROR_CODES.STATE_CORRUPT,
          `event ${row.seq} of session ${sessionId} in the state database ${this.where} is malformed; One Works will not rewrite it`,
          { data: { sessionId, seq: Number(row.seq) }, cause: parsed.error },
        );
      }
      return parsed.data as RuntimeEvent;
    });
  }

  async #query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    return this.#retrying(() => this.#queryOnce<R>(text, values));
  }

  async #queryOnce<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>> {
    if (this.#closed) throw new OneWorksError(ERROR_CODES.INTERNAL, `the state database store ${this.where} is closed`);
    return this.withClient((client) => client.query<R>(text, values));
  }

  // Runs `work` again while the database cannot be reached, for `retryUnavailableMs` at most.
  async #retrying<T>(work: (attempt: number) => Promise<T>): Promise<T> {
    const deadline = Date.now() + (this.#options.retryUnavailableMs ?? 0);
    for (let attempt = 0; ; attempt++) {
      try {
        return await work(attempt);
      } catch (error) {
        if (!isOneWorksError(error, ERROR_CODES.STATE_UNAVAILABLE) || this.#closed || Date.now() >= deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** attempt, 1000)));
      }
    }
  }

  async #transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.#retrying(() => this.#transactionOnce(work));
  }

  async #transactionOnce<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.withClient(async (client) => {
      await client.query('BEGIN');
      try {
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      }
    });
  }

  async #readOwnerRow(client: pg.ClientBase): Promise<OwnerRecord | undefined> {
    const { rows } = await client.query<{ record: unknown }>('SELECT record FROM owner');
    if (rows.length === 0) return undefined;
    const parsed = OwnerRecordSchema.safeParse(rows[0]?.record);
    if (!parsed.success) {
      throw new OneWorksError(ERROR_CODES.STATE_CORRUPT, `the owner row of the state database ${this.where} is malformed`, {
        data: { database: this.where },
        cause: parsed.error,
      });
    }
    return parsed.data;
  }

  #parseSession(row: SessionRow): { ok: true; record: SessionRecord } | { ok: false; reason: string; cause: unknown } {
    const value = typeof row.record === 'object' && row.record !== null ? { ...row.record, runs: row.runs } : row.record;
    const parsed = SessionRecordSchema.safeParse(value);
    if (parsed.success && parsed.data.id === row.id) return { ok: true, record: parsed.data };
    if (parsed.success) return { ok: false, reason: `id: the record names session ${parsed.data.id}`, cause: undefined };
    const problems = parsed.error.issues.slice(0, 3).map((issue) => `${issue.path.join('.') || '(record)'}: ${issue.message}`);
    const more = parsed.error.issues.length > 3 ? ` (and ${parsed.error.issues.length - 3} more)` : '';
    return { ok: false, reason: `${problems.join('; ')}${more}`, cause: parsed.error };
  }

  #recordName(sessionId: string): string {
    return `${this.where} (sessions, id ${sessionId})`;
  }

  #corruptRecord(sessionId: string, reason: string, cause: unknown): OneWorksError {
    const name = this.#recordName(sessionId);
    return new OneWorksError(
      ERROR_CODES.STATE_CORRUPT,
      `session ${sessionId} cannot be read: its record in ${name} is malformed (${reason}). One Works leaves it alone and goes on with the other sessions (\`one-works doctor\` lists every bad record)`,
      { data: { sessionId, file: name, reason }, ...(cause === undefined ? {} : { cause }) },
    );
  }

  // Deletes `<state>/sessions/<id>` (the session HOME) when this store has a state directory.
  async #removeLocalFolder(sessionId: string): Promise<number> {
    if (this.#options.stateDir === undefined) return 0;
    const dir = sessionDir(this.#options.stateDir, sessionId);
    const doomed = path.join(path.dirname(dir), `.removing-${sessionId}-${randomBytes(4).toString('hex')}`);
    try {
      await rename(dir, doomed);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw error;
    }
    const bytes = await directorySize(doomed);
    await rm(doomed, { recursive: true, force: true });
    return bytes;
  }

  // A failure as callers see it: connection problems are `state_unavailable`; no message holds a secret.
  #failure(error: unknown): unknown {
    if (isOneWorksError(error)) return error;
    const message = this.#scrub(error instanceof Error ? error.message : String(error));
    if (isConnectionFailure(error)) {
      return new OneWorksError(
        ERROR_CODES.STATE_UNAVAILABLE,
        `the state database ${this.where} cannot be used: ${message}; check that PostgreSQL runs there and that state.postgres.url is right, then retry`,
        { data: { database: this.where, code: (error as { code?: string }).code }, cause: new Error(message) },
      );
    }
    return new OneWorksError(ERROR_CODES.INTERNAL, `the state database ${this.where} refused a query: ${message}`, {
      data: { database: this.where, code: (error as { code?: string }).code },
      cause: { code: (error as { code?: string }).code, message },
    });
  }

  #scrub(text: string): string {
    let scrubbed = text;
    for (const secret of this.#secrets) scrubbed = scrubbed.split(secret).join('***');
    return scrubbed;
  }
}

const UNIQUE_VIOLATION = '23505';
// The subscription key of a channel listener that hears every payload.
const ANY_PAYLOAD = '\0any';
// Wait before listening again after the LISTEN connection broke (a database restarting).
const RELISTEN_MS = 500;

interface SessionRow {
  id: string;
  record: unknown;
  runs: unknown;
}

const SELECT_SESSIONS = `SELECT s.id, s.record,
  coalesce((SELECT json_agg(r.record ORDER BY r.ordinal) FROM runs r WHERE r.session_id = s.id), '[]'::json) AS runs
  FROM sessions s`;

// Socket errors, PostgreSQL's connection exceptions (08), shutdowns (57P0x), authentication (28) and pg's own.
function isConnectionFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') {
    if (['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EPIPE'].includes(code))
      return true;
    if (/^(08|57P0|28|3D000)/.test(code)) return true;
  }
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|not queryable/i.test(
    message,
  );
}

/** A flag that a waiter can sleep on: set wakes it, and a set before the wait makes the wait return at once. */
class Latch {
  #set = false;
  #wake: (() => void) | undefined;

  set(): void {
    this.#set = true;
    this.#wake?.();
  }

  clear(): void {
    this.#set = false;
  }

  async wait(ms: number, signal: AbortSignal | undefined): Promise<void> {
    if (this.#set || signal?.aborted) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
      this.#wake = done;
    });
  }
}

/**
 * One LISTEN connection per store and channel, shared by its followers, opened on the first
 * follow and again after it breaks (followers poll meanwhile, and all are woken after a
 * reconnect since notifications may have been missed).
 */
class EventNotifier {
  readonly #config: pg.ClientConfig;
  readonly #channel: string;
  readonly #onError: (error: Error) => void;
  readonly #subscribers = new Map<string, Set<(payload?: string) => void>>();
  #client: pg.Client | undefined;
  #connecting: Promise<void> | undefined;
  #retry: NodeJS.Timeout | undefined;
  #closed = false;

  constructor(config: pg.ClientConfig, channel: string, onError: (error: Error) => void) {
    this.#config = config;
    this.#channel = channel;
    this.#onError = onError;
  }

  subscribe(sessionId: string, wake: (payload?: string) => void): () => void {
    let set = this.#subscribers.get(sessionId);
    if (!set) {
      set = new Set();
      this.#subscribers.set(sessionId, set);
    }
    set.add(wake);
    this.listen();
    return () => {
      set.delete(wake);
      if (set.size === 0) this.#subscribers.delete(sessionId);
    };
  }

  /** Starts listening unless it is, or is starting. */
  listen(): void {
    if (this.#closed || this.#client || this.#connecting) return;
    const client = new pg.Client(this.#config);
    const drop = (error?: Error): void => {
      if (error) this.#onError(error);
      if (this.#client === client) {
        this.#client = undefined;
        this.#relisten();
      }
      client.end().catch(() => undefined);
    };
    client.on('error', drop);
    client.on('end', () => drop());
    client.on('notification', (message) => {
      for (const wake of this.#subscribers.get(message.payload ?? '') ?? []) wake(message.payload);
      for (const wake of this.#subscribers.get(ANY_PAYLOAD) ?? []) wake(message.payload);
    });
    this.#connecting = (async () => {
      await client.connect();
      await client.query(`LISTEN ${this.#channel}`);
      if (this.#closed) {
        await client.end();
        return;
      }
      this.#client = client;
      for (const set of this.#subscribers.values()) for (const wake of set) wake();
    })()
      .catch(() => {
        client.end().catch(() => undefined);
        this.#relisten();
      })
      .finally(() => {
        this.#connecting = undefined;
      });
  }

  // While someone listens, listen again a little later (the database may be restarting).
  #relisten(): void {
    if (this.#closed || this.#retry || this.#subscribers.size === 0) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      if (this.#subscribers.size > 0) this.listen();
    }, RELISTEN_MS);
    this.#retry.unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    if (this.#retry) clearTimeout(this.#retry);
    this.#retry = undefined;
    await this.#connecting;
    const client = this.#client;
    this.#client = undefined;
    await client?.end().catch(() => undefined);
  }
}
