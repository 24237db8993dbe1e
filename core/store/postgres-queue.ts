import { ERROR_CODES, OneWorksError } from '../errors.js';
import type { PostgresStore } from './postgres-store.js';

/**
 * The fleet's queue of turns and its workers' leases, on the PostgreSQL store (tables `queue`
 * and `workers`, schema version 2). This is the foundation of `serve --worker`, which does not
 * use it yet: turns are enqueued, claimed transactionally by workers that hold a live lease
 * (`FOR UPDATE SKIP LOCKED`, oldest first), FIFO per session with at most one live turn per
 * session (also a unique index: the database refuses a second one), within the worker's
 * `maxConcurrentRuns` and an optional fleet-wide limit. A worker whose lease expires loses its
 * claimed turns to `unknown` ({@link expireLeases}); they are never claimed again.
 */

/** A queued turn as a worker claims it. */
export interface ClaimedTurn {
  id: number;
  sessionId: string;
  runId: string;
}

/** The channel that enqueues and finishes notify (payload: the session id), for workers to wake on. */
export const QUEUE_CHANNEL = 'one_works_queue';

const DISPATCH_LOCK = 'one-works:dispatch';
const UNIQUE_VIOLATION = '23505';

/**
 * Appends a bare turn to the queue (no request: migration 2's form, kept for its tests); returns
 * its queue id. `claimTurns` and `finishTurn` handle bare turns only; the fleet's requests
 * (core/fleet/fleet-queue.ts) have their own claim and finish.
 */
export async function enqueueTurn(store: PostgresStore, sessionId: string, runId: string): Promise<number> {
  const { rows } = await store.withClient((client) =>
    client.query<{ id: string }>(
      `WITH added AS (INSERT INTO queue (session_id, run_id) VALUES ($1, $2) RETURNING id)
       SELECT added.id, pg_notify($3, $1) FROM added`,
      [sessionId, runId, QUEUE_CHANNEL],
    ),
  );
  return Number(rows[0]?.id);
}

export interface ClaimOptions {
  /** The worker claiming: it must hold a live lease. */
  worker: string;
  /** Turns running at once across the fleet at most (`orchestrator.fleetMaxConcurrentRuns`); absent: no fleet limit. */
  fleetMaxConcurrentRuns?: number;
}

/**
 * Claims as many queued turns as the worker's and the fleet's room allow, oldest first, each
 * the head of its session's queue in a session with no live turn. Claims are serialised under
 * a transaction-scoped advisory lock when a fleet limit applies (the count and the claim must
 * agree); otherwise concurrent claimers skip each other's locked rows. One claim loop per
 * worker. Throws `worker_lease_lost` when the worker's lease has expired.
 */
export async function claimTurns(store: PostgresStore, options: ClaimOptions): Promise<ClaimedTurn[]> {
  return store.withClient(async (client) => {
    await client.query('BEGIN');
    try {
      if (options.fleetMaxConcurrentRuns !== undefined) {
        await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [DISPATCH_LOCK]);
      }
      const { rows: leases } = await client.query<{ max: number }>(
        'SELECT max_concurrent_runs AS max FROM workers WHERE name = $1 AND lease_expires_at > clock_timestamp()',
        [options.worker],
      );
      const lease = leases[0];
      if (!lease) throw leaseLost(options.worker);
      const { rows: live } = await client.query<{ mine: string; fleet: string }>(
        "SELECT count(*) FILTER (WHERE worker = $1) AS mine, count(*) AS fleet FROM queue WHERE state = 'claimed'",
        [options.worker],
      );
      const mine = Number(live[0]?.mine ?? 0);
      const fleet = Number(live[0]?.fleet ?? 0);
      const room = Math.min(lease.max - mine, (options.fleetMaxConcurrentRuns ?? Number.POSITIVE_INFINITY) - fleet);
      if (room <= 0) {
        await client.query('COMMIT');
        return [];
      }
      const { rows } = await client.query<{ id: string; session_id: string; run_id: string }>(
        `WITH candidate AS (
           SELECT q.id FROM queue q
           WHERE q.state = 'queued' AND q.op IS NULL
             AND NOT EXISTS (
               SELECT 1 FROM queue o
               WHERE o.session_id = q.session_id AND (o.state = 'claimed' OR (o.state = 'queued' AND o.id < q.id)))
           ORDER BY q.id
           LIMIT $2
           FOR UPDATE SKIP LOCKED)
         UPDATE queue SET state = 'claimed', worker = $1, claimed_at = clock_timestamp()
         FROM candidate WHERE queue.id = candidate.id
         RETURNING queue.id, queue.session_id, queue.run_id`,
        [options.worker, room],
      );
      await client.query('COMMIT');
      return rows.map((row) => ({ id: Number(row.id), sessionId: row.session_id, runId: row.run_id })).sort((a, b) => a.id - b.id);
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      // Another claimer took this session's turn in between: nothing claimed, try again later.
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) return [];
      throw error;
    }
  });
}

/** Records a claimed turn as ended; `worker_lease_lost` when it is no longer this worker's claim. */
export async function finishTurn(store: PostgresStore, worker: string, runId: string): Promise<void> {
  const { rowCount } = await store.withClient((client) =>
    client.query(
      `WITH ended AS (
         UPDATE queue SET state = 'done', ended_at = clock_timestamp()
         WHERE run_id = $1 AND worker = $2 AND state = 'claimed' AND op IS NULL RETURNING session_id)
       SELECT pg_notify($3, session_id) FROM ended`,
      [runId, worker, QUEUE_CHANNEL],
    ),
  );
  if ((rowCount ?? 0) === 0) throw leaseLost(worker, runId);
}

/**
 * Records every claimed turn of a worker whose lease has expired as `unknown` (never replayed:
 * no worker claims it again); returns those turns. Any worker may call it.
 */
export async function expireLeases(store: PostgresStore): Promise<Array<ClaimedTurn & { worker: string }>> {
  const { rows } = await store.withClient((client) =>
    client.query<{ id: string; session_id: string; run_id: string; worker: string }>(
      `UPDATE queue SET state = 'unknown', ended_at = clock_timestamp()
       WHERE state = 'claimed' AND worker IN (SELECT name FROM workers WHERE lease_expires_at <= clock_timestamp())
       RETURNING id, session_id, run_id, worker`,
    ),
  );
  return rows.map((row) => ({ id: Number(row.id), sessionId: row.session_id, runId: row.run_id, worker: row.worker }));
}

export interface WorkerRegistration {
  name: string;
  host: string;
  pid: number;
  maxConcurrentRuns: number;
  /** How long a lease lasts without a heartbeat, in ms. */
  leaseMs: number;
}

/**
 * A worker's lease: registered once (refused with `state_locked` while another registration of
 * the same name holds a live lease), renewed by heartbeats. A heartbeat that finds its lease
 * expired or taken over throws `worker_lease_lost`.
 */
export class WorkerLease {
  readonly name: string;
  readonly #store: PostgresStore;
  readonly #leaseMs: number;
  readonly #generation: number;
  #timer: NodeJS.Timeout | undefined;

  private constructor(store: PostgresStore, name: string, leaseMs: number, generation: number) {
    this.#store = store;
    this.name = name;
    this.#leaseMs = leaseMs;
    this.#generation = generation;
  }

  static async register(store: PostgresStore, worker: WorkerRegistration): Promise<WorkerLease> {
    const { rows } = await store.withClient((client) =>
      client.query<{ generation: string }>(
        `INSERT INTO workers (name, host, pid, max_concurrent_runs, lease_expires_at)
         VALUES ($1, $2, $3, $4, clock_timestamp() + make_interval(secs => $5::float8 / 1000))
         ON CONFLICT (name) DO UPDATE SET host = EXCLUDED.host, pid = EXCLUDED.pid, max_concurrent_runs = EXCLUDED.max_concurrent_runs,
           started_at = now(), heartbeat_at = now(), lease_expires_at = EXCLUDED.lease_expires_at, generation = workers.generation + 1
         WHERE workers.lease_expires_at <= clock_timestamp()
         RETURNING generation`,
        [worker.name, worker.host, worker.pid, worker.maxConcurrentRuns, worker.leaseMs],
      ),
    );
    const generation = rows[0]?.generation;
    if (generation === undefined) {
      throw new OneWorksError(
        ERROR_CODES.STATE_LOCKED,
        `worker ${worker.name} is registered by a live process; choose another name or stop it`,
        {
          data: { worker: worker.name },
        },
      );
    }
    return new WorkerLease(store, worker.name, worker.leaseMs, Number(generation));
  }

  /** Renews the lease for another leaseMs; `worker_lease_lost` when it had expired or was taken over. */
  async heartbeat(): Promise<void> {
    const { rowCount } = await this.#store.withClient((client) =>
      client.query(
        `UPDATE workers SET heartbeat_at = clock_timestamp(), lease_expires_at = clock_timestamp() + make_interval(secs => $3::float8 / 1000)
         WHERE name = $1 AND generation = $2 AND lease_expires_at > clock_timestamp()`,
        [this.name, this.#generation, this.#leaseMs],
      ),
    );
    if ((rowCount ?? 0) === 0) throw leaseLost(this.name);
  }

  /** Heartbeats every `intervalMs` until `stop`; `onLost` hears a lost lease (heartbeats then stop) or a failed one. */
  startHeartbeat(intervalMs: number, onError: (error: unknown) => void): void {
    this.stop();
    const beat = (): void => {
      this.heartbeat().then(
        () => {
          if (this.#timer) this.#timer = setTimeout(beat, intervalMs);
        },
        (error: unknown) => {
          onError(error);
          const lost = (error as { code?: string }).code === ERROR_CODES.WORKER_LEASE_LOST;
          if (this.#timer && !lost) this.#timer = setTimeout(beat, intervalMs);
          else this.#timer = undefined;
        },
      );
    };
    this.#timer = setTimeout(beat, intervalMs);
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** Stops heartbeats and ends the lease now (a clean stop: the name is free at once). */
  async release(): Promise<void> {
    this.stop();
    await this.#store.withClient((client) =>
      client.query('UPDATE workers SET lease_expires_at = clock_timestamp() WHERE name = $1 AND generation = $2', [
        this.name,
        this.#generation,
      ]),
    );
  }
}

function leaseLost(worker: string, runId?: string): OneWorksError {
  const what = runId === undefined ? '' : ` (turn ${runId} is not its claim any more)`;
  return new OneWorksError(
    ERROR_CODES.WORKER_LEASE_LOST,
    `worker ${worker} has no live lease${what}; its claimed turns are recorded unknown and never run again`,
    { data: { worker, ...(runId === undefined ? {} : { runId }) } },
  );
}
