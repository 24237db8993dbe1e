import { ERROR_CODES, OneWorksError } from '../errors.js';
import type { PostgresStore } from './postgres-store.js';

/**
 * The fleet's worker leases on the PostgreSQL store (table `workers`), and the expiry of a lost
 * worker's claims: a worker whose lease expires loses its claimed requests to `unknown`
 * ({@link expireLeases}); they are never claimed again. The requests themselves (submit, claim,
 * settle, finish) are core/fleet/fleet-queue.ts.
 */

/** A claimed request of a worker whose lease expired, now `unknown`. */
export interface ExpiredTurn {
  id: number;
  sessionId: string;
  /** Null for a create no run was accepted for yet. */
  runId: string | null;
  worker: string;
}

/** The channel that enqueues and finishes notify (payload: the session id), for workers to wake on. */
export const QUEUE_CHANNEL = 'one_works_queue';

/**
 * Records every claimed turn of a worker whose lease has expired as `unknown` (never replayed:
 * no worker claims it again); returns those turns. Any worker may call it.
 */
export async function expireLeases(store: PostgresStore): Promise<ExpiredTurn[]> {
  const { rows } = await store.withClient((client) =>
    client.query<{ id: string; session_id: string; run_id: string | null; worker: string }>(
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
