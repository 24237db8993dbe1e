import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { z } from 'zod';
import { ERROR_CODES, type ErrorCode, OneWorksError, isOneWorksError } from '../errors.js';
import type { CreateSessionRequest, SendMessageRequest, TurnHandle } from '../orchestrator/types.js';
import { TurnHandleSchema } from '../orchestrator/turn-handle-schema.js';
import { loggedOutcomes, recoveredRecord } from '../session/recover.js';
import { expireLeases, QUEUE_CHANNEL } from '../store/postgres-queue.js';
import type { PostgresStore } from '../store/postgres-store.js';
import type { ReconcileRequest } from '../session/reconcile.js';
import { assertSessionId } from '../store/state-layout.js';

/**
 * The fleet's turn requests on the PostgreSQL store (schema version 3): what clients submit
 * (`submitCreate`, `submitSend`, `requestCancel`, `awaitAccepted`, `fleetStatus`,
 * `queuedRequests`) and what workers claim (`claimRequests`), settle and finish. A request is a
 * row of `queue`: `queued` until a worker claims it, `claimed` while its turn is accepted and
 * runs on that worker, then `done` (its `result` holds the TurnHandle or the error the worker's
 * orchestrator threw), `cancelled` (cancelled while queued) or `unknown` (its worker's lease
 * expired while it held it: never given to another worker). A create is claimed by a worker
 * with room whose approved roots contain its workspace, and that worker then holds the
 * session's HOME (`session_homes`); a send only by the worker holding its session's HOME, or,
 * with shared homes, by any worker once the holder's lease expired.
 */

/** Notified with a request's id when its result (handle or error) or its end is written. */
export const RESULT_CHANNEL = 'one_works_queue_result';
/** Notified with a request's id when a client asks its worker to cancel its live turn. */
export const CANCEL_CHANNEL = 'one_works_queue_cancel';

const DISPATCH_LOCK = 'one-works:dispatch';
const UNIQUE_VIOLATION = '23505';
// The safety poll of a waiter whose notification was missed (a connection that broke).
const RESULT_POLL_MS = 1000;
/** How long `requestCancel` waits for a worker to end a live turn, by default. */
export const CANCEL_WAIT_MS = 30_000;

const SESSION_ID = /^s-[0-9a-f]{10}$/;

/** What a request asks: a turn (create, send) or a person's verdict (reconcile, resolve). */
export type RequestOp = 'create' | 'send' | 'reconcile' | 'resolve';

/** The state of a request row. */
export type RequestState = 'queued' | 'claimed' | 'done' | 'unknown' | 'cancelled';

const RequestErrorSchema = z.object({ code: z.string(), message: z.string(), data: z.record(z.string(), z.unknown()).optional() });
/** A request's result as a worker writes it (`ok`: a reconcile or resolve its orchestrator did). */
export const RequestResultSchema = z.union([
  z.object({ handle: TurnHandleSchema }),
  z.object({ error: RequestErrorSchema }),
  z.object({ ok: z.literal(true) }),
]);
export type RequestResult = z.infer<typeof RequestResultSchema>;

/** A fresh session id in the orchestrator's format (`s-` and 10 hex digits). */
export function newFleetSessionId(): string {
  return `s-${randomBytes(5).toString('hex')}`;
}

/** True for an id in the orchestrator's format. */
export function isSessionIdFormat(id: string): boolean {
  return SESSION_ID.test(id);
}

/**
 * Queues a new session's first turn; `request.workspace` must be canonical (a worker whose
 * approved roots contain it takes it). The session id is assigned now, so the client can name
 * the session before any worker accepted it. The request key is not part of the row: the
 * client deduplicates (request keys are per worker).
 */
export async function submitCreate(store: PostgresStore, request: CreateSessionRequest): Promise<{ requestId: number; sessionId: string }> {
  const { requestKey: _key, ...rest } = request;
  for (;;) {
    const sessionId = newFleetSessionId();
    const { rows } = await store.withClient((client) =>
      client.query<{ id: string }>(
        `WITH added AS (
           INSERT INTO queue (session_id, op, request, workspace)
           SELECT $1, 'create', $2, $3
           WHERE NOT EXISTS (SELECT 1 FROM sessions WHERE id = $1) AND NOT EXISTS (SELECT 1 FROM queue WHERE session_id = $1)
           RETURNING id)
         SELECT added.id, pg_notify($4, $1) FROM added`,
        [sessionId, JSON.stringify({ ...rest, sessionId }), request.workspace, QUEUE_CHANNEL],
      ),
    );
    const id = rows[0]?.id;
    if (id !== undefined) return { requestId: Number(id), sessionId };
  }
}

/**
 * Queues one more turn of a session (FIFO after its earlier requests). `session_not_found` when
 * neither the database nor the queue knows the session.
 */
export async function submitSend(store: PostgresStore, request: SendMessageRequest): Promise<{ requestId: number; sessionId: string }> {
  const { requestKey: _key, ...rest } = request;
  const { sessionId } = request;
  assertSessionId(sessionId);
  const { rows } = await store.withClient((client) =>
    client.query<{ id: string }>(
      `WITH added AS (
         INSERT INTO queue (session_id, op, request)
         SELECT $1, 'send', $2
         WHERE EXISTS (SELECT 1 FROM sessions WHERE id = $1) OR EXISTS (SELECT 1 FROM queue WHERE session_id = $1 AND op = 'create')
         RETURNING id)
       SELECT added.id, pg_notify($3, $1) FROM added`,
      [sessionId, JSON.stringify(rest), QUEUE_CHANNEL],
    ),
  );
  const id = rows[0]?.id;
  if (id === undefined) throw notFound(sessionId);
  return { requestId: Number(id), sessionId };
}

/** A person's request on a session, run by the worker holding its HOME (schema version 4). */
export type PersonRequest =
  | { op: 'reconcile'; request: ReconcileRequest }
  | { op: 'resolve'; request: { sessionId: string; note?: string } };

/**
 * Queues `sessions reconcile` or `sessions resolve` for the worker holding the session's HOME
 * (its orchestrator keeps the record in memory: a client never writes it), FIFO after the
 * session's earlier requests. `session_not_found` when neither the database nor the queue knows
 * the session.
 */
export async function submitPersonRequest(store: PostgresStore, person: PersonRequest): Promise<{ requestId: number; sessionId: string }> {
  const { sessionId } = person.request;
  assertSessionId(sessionId);
  const { rows } = await store.withClient((client) =>
    client.query<{ id: string }>(
      `WITH added AS (
         INSERT INTO queue (session_id, op, request)
         SELECT $1, $2, $3
         WHERE EXISTS (SELECT 1 FROM sessions WHERE id = $1) OR EXISTS (SELECT 1 FROM queue WHERE session_id = $1 AND op = 'create')
         RETURNING id)
       SELECT added.id, pg_notify($4, $1) FROM added`,
      [sessionId, person.op, JSON.stringify(person.request), QUEUE_CHANNEL],
    ),
  );
  const id = rows[0]?.id;
  if (id === undefined) throw notFound(sessionId);
  return { requestId: Number(id), sessionId };
}

/**
 * Resolves once the worker holding the session did a person's request (reconcile, resolve);
 * throws its orchestrator's error, `request_cancelled` or `worker_lease_lost` as
 * {@link awaitAccepted} does.
 */
export async function awaitDone(store: PostgresStore, requestId: number, signal?: AbortSignal): Promise<void> {
  await awaitResult(store, requestId, signal);
}

/**
 * Resolves with the TurnHandle once a worker accepted the request; throws the error the
 * worker's orchestrator threw (same code and message), `request_cancelled` when it was
 * cancelled before a worker took it, `worker_lease_lost` when its worker was lost before it
 * answered. Wakes on NOTIFY, with a slow poll as a safety net. `signal` stops the wait.
 */
export async function awaitAccepted(store: PostgresStore, requestId: number, signal?: AbortSignal): Promise<TurnHandle> {
  const result = await awaitResult(store, requestId, signal);
  if ('handle' in result) return result.handle as TurnHandle;
  throw new OneWorksError(ERROR_CODES.STATE_CORRUPT, `fleet request ${requestId} is not a turn: it has no handle`, { data: { requestId } });
}

// The request's result once written (its error thrown), waking on NOTIFY with a slow poll.
async function awaitResult(store: PostgresStore, requestId: number, signal?: AbortSignal): Promise<RequestResult> {
  let wake: () => void = () => undefined;
  const stop = store.listen(RESULT_CHANNEL, (payload) => {
    if (payload === undefined || payload === String(requestId)) wake();
  });
  try {
    for (;;) {
      if (signal?.aborted) throw new OneWorksError(ERROR_CODES.REQUEST_CANCELLED, `stopped waiting for request ${requestId}`);
      const woken = new Promise<void>((resolve) => {
        wake = resolve;
      });
      const row = await readRequest(store, requestId).catch((error: unknown) => {
        // The database restarting is a pause: read again after the next wake-up or poll.
        if (isOneWorksError(error, ERROR_CODES.STATE_UNAVAILABLE)) return 'retry' as const;
        throw error;
      });
      if (row !== 'retry') {
        const settled = settledResult(row);
        if (settled) return settled;
      }
      await sleepUntil(woken, RESULT_POLL_MS, signal);
    }
  } finally {
    stop();
  }
}

/**
 * Cancels a session's requests: the queued ones at once (`cancelled`, never run), and asks the
 * worker holding its live one to cancel that turn; with `runId`, only the request of that run.
 * Resolves once no request of the session (or that run) is claimed any more, or after
 * `waitMs` (the worker may be lost: its turn then becomes `unknown` when its lease expires).
 */
export async function requestCancel(store: PostgresStore, sessionId: string, runId?: string, waitMs = CANCEL_WAIT_MS): Promise<void> {
  await store.withClient(async (client) => {
    if (runId === undefined) {
      await client.query(
        `WITH gone AS (UPDATE queue SET state = 'cancelled', ended_at = clock_timestamp() WHERE session_id = $1 AND state = 'queued' RETURNING id)
         SELECT pg_notify($2, id::text) FROM gone`,
        [sessionId, RESULT_CHANNEL],
      );
    }
    await client.query(
      `WITH asked AS (
         UPDATE queue SET cancel_requested = true WHERE session_id = $1 AND state = 'claimed' AND ($2::text IS NULL OR run_id = $2) RETURNING id)
       SELECT pg_notify($3, id::text) FROM asked`,
      [sessionId, runId ?? null, CANCEL_CHANNEL],
    );
  });
  const deadline = Date.now() + waitMs;
  let wake: () => void = () => undefined;
  const stop = store.listen(RESULT_CHANNEL, () => wake());
  try {
    while (Date.now() < deadline) {
      const woken = new Promise<void>((resolve) => {
        wake = resolve;
      });
      const { rows } = await store.withClient((client) =>
        client.query(`SELECT 1 FROM queue WHERE session_id = $1 AND state = 'claimed' AND ($2::text IS NULL OR run_id = $2)`, [
          sessionId,
          runId ?? null,
        ]),
      );
      if (rows.length === 0) return;
      await sleepUntil(woken, Math.min(RESULT_POLL_MS, Math.max(0, deadline - Date.now())), undefined);
    }
  } finally {
    stop();
  }
}

/** A worker as `fleetStatus` shows it. */
export interface FleetWorkerStatus {
  name: string;
  host: string;
  pid: number;
  maxConcurrentRuns: number;
  approvedRoots: string[];
  /** Requests it holds now (claimed). */
  live: number;
  leaseExpiresAt: string;
  /** Its lease is live. */
  alive: boolean;
}

/** A request that waits for a worker whose lease expired (it holds the session's HOME). */
export interface WaitingOnLostWorker {
  requestId: number;
  sessionId: string;
  worker: string;
  /** Always `worker_lost`: what a client shows for it. */
  reason: 'worker_lost';
}

export interface FleetStatus {
  workers: FleetWorkerStatus[];
  queue: { queued: number; claimed: number; byWorker: Record<string, number> };
  waitingOnLostWorkers: WaitingOnLostWorker[];
}

/** The fleet's workers, their leases and load, the queue's depth and what waits on lost workers. */
export async function fleetStatus(store: PostgresStore): Promise<FleetStatus> {
  return store.withClient(async (client) => {
    const workers = await client.query<{
      name: string;
      host: string;
      pid: number;
      max: number;
      roots: string[];
      live: string;
      expires: Date;
      alive: boolean;
    }>(
      `SELECT w.name, w.host, w.pid, w.max_concurrent_runs AS max, w.approved_roots AS roots, w.lease_expires_at AS expires,
         w.lease_expires_at > clock_timestamp() AS alive,
         (SELECT count(*) FROM queue q WHERE q.worker = w.name AND q.state = 'claimed') AS live
       FROM workers w ORDER BY w.name`,
    );
    const counts = await client.query<{ state: string; worker: string | null; n: string }>(
      `SELECT state, worker, count(*) AS n FROM queue WHERE state IN ('queued', 'claimed') GROUP BY state, worker`,
    );
    const waiting = await client.query<{ id: string; session_id: string; worker: string }>(
      `SELECT q.id, q.session_id, h.worker FROM queue q
       JOIN session_homes h ON h.session_id = q.session_id
       JOIN workers w ON w.name = h.worker
       WHERE q.state = 'queued' AND q.op IN ('send', 'reconcile', 'resolve') AND w.lease_expires_at <= clock_timestamp()
       ORDER BY q.id`,
    );
    const byWorker: Record<string, number> = {};
    let queued = 0;
    let claimed = 0;
    for (const row of counts.rows) {
      const n = Number(row.n);
      if (row.state === 'queued') queued += n;
      else {
        claimed += n;
        if (row.worker !== null) byWorker[row.worker] = (byWorker[row.worker] ?? 0) + n;
      }
    }
    return {
      workers: workers.rows.map((row) => ({
        name: row.name,
        host: row.host,
        pid: row.pid,
        maxConcurrentRuns: row.max,
        approvedRoots: row.roots,
        live: Number(row.live),
        leaseExpiresAt: row.expires.toISOString(),
        alive: row.alive,
      })),
      queue: { queued, claimed, byWorker },
      waitingOnLostWorkers: waiting.rows.map((row) => ({
        requestId: Number(row.id),
        sessionId: row.session_id,
        worker: row.worker,
        reason: 'worker_lost' as const,
      })),
    };
  });
}

/** A request as `queuedRequests` lists it. */
export interface QueuedRequest {
  requestId: number;
  sessionId: string;
  op: RequestOp;
  state: 'queued' | 'claimed';
  worker?: string | undefined;
  /** Set once accepted. */
  runId?: string | undefined;
  submittedAt: string;
  /** The worker holding the session's HOME has no live lease: it waits for it (`worker_lost`). */
  waitingOn?: 'worker_lost' | undefined;
}

/** Requests not yet over (queued or claimed), oldest first; only the session's when given. */
export async function queuedRequests(store: PostgresStore, sessionId?: string): Promise<QueuedRequest[]> {
  const { rows } = await store.withClient((client) =>
    client.query<{
      id: string;
      session_id: string;
      op: RequestOp | null;
      state: 'queued' | 'claimed';
      worker: string | null;
      run_id: string | null;
      submitted_at: Date;
      lost: boolean | null;
    }>(
      `SELECT q.id, q.session_id, q.op, q.state, q.worker, q.run_id, q.submitted_at,
         (q.state = 'queued' AND q.op = 'send' AND w.lease_expires_at <= clock_timestamp()) AS lost
       FROM queue q LEFT JOIN session_homes h ON h.session_id = q.session_id LEFT JOIN workers w ON w.name = h.worker
       WHERE q.state IN ('queued', 'claimed') AND ($1::text IS NULL OR q.session_id = $1)
       ORDER BY q.id`,
      [sessionId ?? null],
    ),
  );
  return rows.map((row) => ({
    requestId: Number(row.id),
    sessionId: row.session_id,
    op: row.op ?? 'send',
    state: row.state,
    ...(row.worker === null ? {} : { worker: row.worker }),
    ...(row.run_id === null ? {} : { runId: row.run_id }),
    submittedAt: row.submitted_at.toISOString(),
    ...(row.lost === true ? { waitingOn: 'worker_lost' as const } : {}),
  }));
}

// ---- The worker side ----

/** A request as the worker that claimed it runs it. */
export type ClaimedRequest =
  | { id: number; sessionId: string; op: 'create'; request: CreateSessionRequest & { sessionId: string } }
  | { id: number; sessionId: string; op: 'send'; request: SendMessageRequest }
  | { id: number; sessionId: string; op: 'reconcile'; request: ReconcileRequest }
  | { id: number; sessionId: string; op: 'resolve'; request: { sessionId: string; note?: string } };

export interface ClaimRequestsOptions {
  /** The claiming worker: it must hold a live lease. */
  worker: string;
  /** `orchestrator.fleetMaxConcurrentRuns`; absent: no fleet limit. */
  fleetMaxConcurrentRuns?: number | undefined;
  /** `state.sharedHomes`: this worker may adopt sessions whose HOME holder's lease expired. */
  sharedHomes?: boolean | undefined;
}

/**
 * Claims the requests this worker may run now, oldest first: each the head of its session's
 * queue in a session with no claimed request; a create whose workspace lies in one of the
 * worker's approved roots (the worker then holds the session's HOME); a send of a session whose
 * HOME this worker holds (or any session, with `sharedHomes`, whose holder's lease expired: it
 * is adopted). Within the worker's `maxConcurrentRuns` and the fleet limit (counted and claimed
 * under one advisory lock), and the workspace lock across the fleet: nothing is claimed whose
 * workspace (the session's, or a create's before it has one) is, contains or lies inside the
 * workspace of a request another worker holds, unless both are readers (autonomy `off`, as
 * requested, or as accepted for the held one; a request that names no autonomy counts as a
 * writer); the holder's own orchestrator orders its own turns as on one host. `worker_lease_lost` when its lease expired.
 */
export async function claimRequests(store: PostgresStore, options: ClaimRequestsOptions): Promise<ClaimedRequest[]> {
  return store.withClient(async (client) => {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [DISPATCH_LOCK]);
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
      const room = Math.min(
        lease.max - Number(live[0]?.mine ?? 0),
        (options.fleetMaxConcurrentRuns ?? Number.POSITIVE_INFINITY) - Number(live[0]?.fleet ?? 0),
      );
      if (room <= 0) {
        await client.query('COMMIT');
        return [];
      }
      const { rows } = await client.query<{ id: string; session_id: string; op: RequestOp; request: unknown }>(
        `WITH me AS (SELECT approved_roots FROM workers WHERE name = $1),
         candidate AS (
           SELECT q.id FROM queue q
           LEFT JOIN session_homes h ON h.session_id = q.session_id
           LEFT JOIN workers hw ON hw.name = h.worker
           LEFT JOIN sessions qs ON qs.id = q.session_id
           WHERE q.state = 'queued' AND q.op IS NOT NULL
             AND NOT EXISTS (
               SELECT 1 FROM queue o
               WHERE o.session_id = q.session_id AND (o.state = 'claimed' OR (o.state = 'queued' AND o.id < q.id)))
             -- The workspace lock across the fleet: no other worker runs a request in this
             -- workspace, above or below it (this worker's own admission orders its own).
             AND NOT EXISTS (
               SELECT 1 FROM queue o LEFT JOIN sessions os ON os.id = o.session_id
               CROSS JOIN LATERAL (SELECT
                 rtrim(COALESCE(qs.record->>'workspace', q.workspace), '/') AS mine,
                 rtrim(COALESCE(os.record->>'workspace', o.workspace), '/') AS theirs) w
               WHERE o.state = 'claimed' AND o.worker <> $1
                 -- Two readers (autonomy off, as requested or accepted) may share it; unknown is a writer.
                 AND NOT (COALESCE(q.request->>'autonomy', '') = 'off'
                   AND COALESCE(o.result->'handle'->'settings'->>'autonomy', o.request->>'autonomy', '') = 'off')
                 AND (w.mine = w.theirs OR starts_with(w.mine, w.theirs || '/') OR starts_with(w.theirs, w.mine || '/')))
             AND (
               (q.op = 'create' AND h.session_id IS NULL AND EXISTS (
                 SELECT 1 FROM me, unnest(me.approved_roots) AS root
                 WHERE q.workspace = root OR starts_with(q.workspace, rtrim(root, '/') || '/')))
               OR (q.op IN ('send', 'reconcile', 'resolve') AND (
                 h.session_id IS NULL OR h.worker = $1
                 OR ($3 AND (hw.name IS NULL OR hw.lease_expires_at <= clock_timestamp())))))
           ORDER BY q.id
           LIMIT $2
           FOR UPDATE OF q SKIP LOCKED),
         claimed AS (
           UPDATE queue SET state = 'claimed', worker = $1, claimed_at = clock_timestamp()
           FROM candidate WHERE queue.id = candidate.id
           RETURNING queue.id, queue.session_id, queue.op, queue.request)
         SELECT * FROM claimed ORDER BY id`,
        [options.worker, room, options.sharedHomes === true],
      );
      if (rows.length > 0) {
        // The claiming worker holds these sessions' HOMEs from now on (new ones, adopted ones).
        await client.query(
          `INSERT INTO session_homes (session_id, worker) SELECT DISTINCT unnest($1::text[]), $2
           ON CONFLICT (session_id) DO UPDATE SET worker = EXCLUDED.worker, since = now() WHERE session_homes.worker <> EXCLUDED.worker`,
          [rows.map((row) => row.session_id), options.worker],
        );
      }
      await client.query('COMMIT');
      return rows.map((row) => ({ id: Number(row.id), sessionId: row.session_id, op: row.op, request: row.request }) as ClaimedRequest);
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      if ((error as { code?: string }).code === UNIQUE_VIOLATION) return [];
      throw error;
    }
  });
}

/**
 * Writes a claimed request's result: its handle (the run id is recorded) or the error its
 * orchestrator threw (the request is then `done`). `worker_lease_lost` when the request is no
 * longer this worker's claim.
 */
export async function settleRequest(store: PostgresStore, worker: string, requestId: number, result: RequestResult): Promise<void> {
  const handle = 'handle' in result ? result.handle : undefined;
  const { rowCount } = await store.withClient((client) =>
    client.query(
      `WITH settled AS (
         UPDATE queue SET result = $3, run_id = $4,
           state = CASE WHEN $4::text IS NULL THEN 'done' ELSE state END,
           ended_at = CASE WHEN $4::text IS NULL THEN clock_timestamp() ELSE ended_at END
         WHERE id = $1 AND worker = $2 AND state = 'claimed' RETURNING id, session_id)
       SELECT pg_notify($5, id::text), pg_notify($6, session_id) FROM settled`,
      [requestId, worker, JSON.stringify(result), handle?.runId ?? null, RESULT_CHANNEL, QUEUE_CHANNEL],
    ),
  );
  if ((rowCount ?? 0) === 0) throw leaseLost(worker, requestId);
}

/** Ends a claimed request whose turn is over (`done`); `worker_lease_lost` when it is no longer this worker's claim. */
export async function finishRequest(store: PostgresStore, worker: string, requestId: number): Promise<void> {
  const { rowCount } = await store.withClient((client) =>
    client.query(
      `WITH ended AS (
         UPDATE queue SET state = 'done', ended_at = clock_timestamp()
         WHERE id = $1 AND worker = $2 AND state = 'claimed' RETURNING id, session_id)
       SELECT pg_notify($3, id::text), pg_notify($4, session_id) FROM ended`,
      [requestId, worker, RESULT_CHANNEL, QUEUE_CHANNEL],
    ),
  );
  if ((rowCount ?? 0) === 0) throw leaseLost(worker, requestId);
}

/**
 * This worker's claimed requests: after a claim whose reply was lost (the connection broke), the
 * worker takes those it does not know it holds (they never started) from here.
 */
export async function claimedBy(store: PostgresStore, worker: string): Promise<ClaimedRequest[]> {
  const { rows } = await store.withClient((client) =>
    client.query<{ id: string; session_id: string; op: RequestOp; request: unknown }>(
      "SELECT id, session_id, op, request FROM queue WHERE worker = $1 AND state = 'claimed' AND op IS NOT NULL ORDER BY id",
      [worker],
    ),
  );
  return rows.map((row) => ({ id: Number(row.id), sessionId: row.session_id, op: row.op, request: row.request }) as ClaimedRequest);
}

/** This worker's claimed requests whose cancellation a client asked for. */
export async function cancelRequested(store: PostgresStore, worker: string): Promise<Array<{ id: number; sessionId: string }>> {
  const { rows } = await store.withClient((client) =>
    client.query<{ id: string; session_id: string }>(
      "SELECT id, session_id FROM queue WHERE worker = $1 AND state = 'claimed' AND cancel_requested",
      [worker],
    ),
  );
  return rows.map((row) => ({ id: Number(row.id), sessionId: row.session_id }));
}

/** Records the worker's approved roots (canonical) in its lease row, for routing creates. */
export async function setApprovedRoots(store: PostgresStore, worker: string, roots: readonly string[]): Promise<void> {
  await store.withClient((client) => client.query('UPDATE workers SET approved_roots = $2 WHERE name = $1', [worker, [...roots]]));
}

/**
 * At a worker's start (after its lease is registered): its requests still `claimed` were held by
 * its previous process, which is gone; they become `unknown` (never run again). The records of
 * their runs are recovered by the worker's orchestrator (its start-up recovery of the sessions
 * it holds). Returns those requests.
 */
export async function abandonPreviousClaims(store: PostgresStore, worker: string): Promise<Array<{ id: number; sessionId: string }>> {
  const { rows } = await store.withClient((client) =>
    client.query<{ id: string; session_id: string }>(
      `WITH lost AS (
         UPDATE queue SET state = 'unknown', ended_at = clock_timestamp() WHERE worker = $1 AND state = 'claimed' RETURNING id, session_id)
       SELECT lost.id, lost.session_id, pg_notify($2, lost.id::text) FROM lost`,
      [worker, RESULT_CHANNEL],
    ),
  );
  return rows.map((row) => ({ id: Number(row.id), sessionId: row.session_id }));
}

/**
 * The sessions held by this worker with a request of this worker's that ended `unknown` (its
 * process was lost while it ran them): what a restarted worker sweeps for agents left running.
 */
export async function lostSessions(store: PostgresStore, worker: string): Promise<string[]> {
  const { rows } = await store.withClient((client) =>
    client.query<{ session_id: string }>(
      `SELECT DISTINCT q.session_id FROM queue q JOIN session_homes h ON h.session_id = q.session_id AND h.worker = $1
       WHERE q.worker = $1 AND q.state = 'unknown' ORDER BY q.session_id`,
      [worker],
    ),
  );
  return rows.map((row) => row.session_id);
}

/** The sessions whose HOME this worker holds. */
export async function homedSessions(store: PostgresStore, worker: string): Promise<string[]> {
  const { rows } = await store.withClient((client) =>
    client.query<{ session_id: string }>('SELECT session_id FROM session_homes WHERE worker = $1 ORDER BY session_id', [worker]),
  );
  return rows.map((row) => row.session_id);
}

/**
 * Expires the leases of lost workers (any worker calls it now and then): their claimed requests
 * become `unknown` and the runs they held are recorded `unknown` in their sessions' records (as
 * after a crash: the session needs a person to reconcile it), queued runs of those sessions
 * `cancelled`. Never replayed. Returns the requests it expired.
 */
export async function expireLostWorkers(
  store: PostgresStore,
  now: () => Date = () => new Date(),
): Promise<Array<{ id: number; sessionId: string; worker: string }>> {
  const expired = await expireLeases(store);
  if (expired.length > 0) {
    await store.withClient((client) =>
      client.query('SELECT pg_notify($1, id::text) FROM unnest($2::bigint[]) AS id', [RESULT_CHANNEL, expired.map((turn) => turn.id)]),
    );
  }
  for (const sessionId of new Set(expired.map((turn) => turn.sessionId))) {
    const record = await store.readSession(sessionId).catch((error: unknown) => {
      if (isOneWorksError(error, ERROR_CODES.SESSION_NOT_FOUND)) return undefined;
      throw error;
    });
    if (!record) continue;
    const recovered = recoveredRecord(record, await loggedOutcomes(store, record), now());
    if (recovered) await store.writeSession(recovered);
  }
  return expired.map((turn) => ({ id: turn.id, sessionId: turn.sessionId, worker: turn.worker }));
}

// ---- helpers ----

interface RequestRow {
  id: string;
  state: RequestState;
  result: unknown;
  worker: string | null;
}

async function readRequest(store: PostgresStore, requestId: number): Promise<RequestRow> {
  const { rows } = await store.withClient((client: pg.PoolClient) =>
    client.query<RequestRow>('SELECT id, state, result, worker FROM queue WHERE id = $1', [requestId]),
  );
  const row = rows[0];
  if (!row) {
    throw new OneWorksError(ERROR_CODES.USAGE, `no fleet request ${requestId} in the state database ${store.where}`, {
      data: { requestId },
    });
  }
  return row;
}

// The result of a settled request, its error thrown, or undefined while it waits.
function settledResult(row: RequestRow): RequestResult | undefined {
  if (row.result !== null && row.result !== undefined) {
    const parsed = RequestResultSchema.safeParse(row.result);
    if (!parsed.success) {
      throw new OneWorksError(ERROR_CODES.STATE_CORRUPT, `the result of fleet request ${row.id} is malformed`, {
        data: { requestId: Number(row.id) },
        cause: parsed.error,
      });
    }
    if (!('error' in parsed.data)) return parsed.data;
    const { code, message, data } = parsed.data.error;
    throw new OneWorksError(code as ErrorCode, message, data === undefined ? {} : { data });
  }
  if (row.state === 'cancelled') {
    throw new OneWorksError(ERROR_CODES.REQUEST_CANCELLED, `request ${row.id} was cancelled before a worker took it; nothing ran`, {
      data: { requestId: Number(row.id) },
    });
  }
  if (row.state === 'unknown' || row.state === 'done') {
    throw new OneWorksError(
      ERROR_CODES.WORKER_LEASE_LOST,
      `worker ${row.worker ?? '?'} was lost while it held request ${row.id}; whether its turn started is unknown, and it is never run again`,
      { data: { requestId: Number(row.id), worker: row.worker } },
    );
  }
  return undefined;
}

async function sleepUntil(woken: Promise<void>, ms: number, signal: AbortSignal | undefined): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  await Promise.race([
    woken,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
      onAbort = resolve;
      signal?.addEventListener('abort', onAbort, { once: true });
    }),
  ]);
  clearTimeout(timer);
  if (onAbort) signal?.removeEventListener('abort', onAbort);
}

function notFound(sessionId: string): OneWorksError {
  return new OneWorksError(ERROR_CODES.SESSION_NOT_FOUND, `no session ${sessionId} in the fleet`, { data: { sessionId } });
}

function leaseLost(worker: string, requestId?: number): OneWorksError {
  const what = requestId === undefined ? '' : ` (request ${requestId} is not its claim any more)`;
  return new OneWorksError(
    ERROR_CODES.WORKER_LEASE_LOST,
    `worker ${worker} has no live lease${what}; its claimed turns are recorded unknown and never run again`,
    { data: { worker, ...(requestId === undefined ? {} : { requestId }) } },
  );
}
