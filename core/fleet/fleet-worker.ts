import { ERROR_CODES, isOneWorksError } from '../errors.js';
import type { Orchestrator } from '../orchestrator/orchestrator.js';
import type { CreateSessionRequest, TurnHandle } from '../orchestrator/types.js';
import { QUEUE_CHANNEL, type WorkerLease } from '../store/postgres-queue.js';
import type { PostgresStore } from '../store/postgres-store.js';
import {
  CANCEL_CHANNEL,
  type ClaimedRequest,
  cancelRequested,
  claimedBy,
  claimRequests,
  expireLostWorkers,
  finishRequest,
  type RequestResult,
  settleRequest,
} from './fleet-queue.js';

/**
 * The dispatch loop of `one-works serve --worker NAME`: claims the requests this worker may run
 * (fleet-queue's routing and limits), hands each to its orchestrator (createSessionWithId with
 * the client's session id, sendMessage, or a person's reconcileRun / resolveAttention), writes the handle or the orchestrator's error into
 * the request, waits for the run to be terminal and finishes the request, so a session's next
 * request can go. Wakes on NOTIFY of the queue (and of cancels) with a slow poll as a safety net;
 * expires lost workers' leases now and then; heartbeats its own lease. Database failures are
 * pauses: every write of the loop is retried until the database answers again (a request is
 * never claimed twice, a turn never started twice). A lost lease stops it (`onLeaseLost`).
 */
export interface FleetWorkerOptions {
  store: PostgresStore;
  orchestrator: Orchestrator;
  lease: WorkerLease;
  fleetMaxConcurrentRuns?: number | undefined;
  sharedHomes?: boolean | undefined;
  /** The lease's length, in ms: heartbeats every third of it, expiry checks every half. */
  leaseMs: number;
  /** The safety poll, in ms (default 1000). */
  pollMs?: number | undefined;
  log: (message: string) => void;
  /** Called once when the lease is lost (the worker then claims nothing more). */
  onLeaseLost: (error: unknown) => void;
}

// Retry pause of a write while the database is unreachable.
const RETRY_MS = 250;
// Tries of a write the database refuses (not a connection failure).
const MAX_REFUSED = 3;

interface LiveRequest {
  request: ClaimedRequest;
  runId?: string;
  cancelAsked: boolean;
  done: Promise<void>;
}

export class FleetWorker {
  readonly #options: FleetWorkerOptions;
  readonly #name: string;
  readonly #live = new Map<number, LiveRequest>();
  #stopping = false;
  #lost = false;
  #wake: (() => void) | undefined;
  #kicked = false;
  #loop: Promise<void> | undefined;
  #timers: NodeJS.Timeout[] = [];
  #unlisten: Array<() => void> = [];

  constructor(options: FleetWorkerOptions) {
    this.#options = options;
    this.#name = options.lease.name;
  }

  /** Requests this worker runs now. */
  get live(): number {
    return this.#live.size;
  }

  start(): void {
    const { store, lease, leaseMs } = this.#options;
    lease.startHeartbeat(Math.max(100, Math.floor(leaseMs / 3)), (error) => {
      if (isOneWorksError(error, ERROR_CODES.WORKER_LEASE_LOST)) this.#leaseLost(error);
      else this.#options.log(`worker ${this.#name}: heartbeat failed (${message(error)}); retrying`);
    });
    this.#unlisten.push(store.listen(QUEUE_CHANNEL, () => this.#kick()));
    this.#unlisten.push(store.listen(CANCEL_CHANNEL, () => void this.#applyCancels()));
    const expiry = setInterval(
      () => {
        expireLostWorkers(store).then(
          (expired) => {
            for (const turn of expired) {
              this.#options.log(`worker ${turn.worker} was lost: request ${turn.id} of session ${turn.sessionId} is recorded unknown`);
            }
          },
          (error: unknown) => {
            if (!isOneWorksError(error, ERROR_CODES.STATE_UNAVAILABLE))
              this.#options.log(`expiring lost workers failed: ${message(error)}`);
          },
        );
      },
      Math.max(200, Math.floor(leaseMs / 2)),
    );
    this.#timers.push(expiry);
    this.#loop = this.#run();
  }

  /** Claims nothing more; resolves once the claim loop has ended (what it claimed has started). */
  async stopClaiming(): Promise<void> {
    this.#stopping = true;
    this.#kick();
    await this.#loop;
  }

  /**
   * Stops claiming and waits until every request it runs is over and finished (the caller
   * shuts its orchestrator down between stopClaiming and stop when the turns must not run to
   * their end); then stops heartbeats and listening. The caller releases the lease.
   */
  async stop(): Promise<void> {
    await this.stopClaiming();
    await Promise.all([...this.#live.values()].map((live) => live.done));
    for (const timer of this.#timers.splice(0)) clearInterval(timer);
    for (const unlisten of this.#unlisten.splice(0)) unlisten();
    this.#options.lease.stop();
  }

  #kick(): void {
    this.#kicked = true;
    this.#wake?.();
  }

  async #run(): Promise<void> {
    const pollMs = this.#options.pollMs ?? 1000;
    // After a failed claim, its reply may be what was lost: this worker's claims are read back.
    let uncertain = false;
    while (!this.#stopping && !this.#lost) {
      this.#kicked = false;
      try {
        if (uncertain) {
          for (const request of await claimedBy(this.#options.store, this.#name)) if (!this.#live.has(request.id)) this.#begin(request);
          uncertain = false;
        }
        const claimed = await claimRequests(this.#options.store, {
          worker: this.#name,
          fleetMaxConcurrentRuns: this.#options.fleetMaxConcurrentRuns,
          sharedHomes: this.#options.sharedHomes,
        });
        for (const request of claimed) this.#begin(request);
        await this.#applyCancels();
      } catch (error) {
        if (isOneWorksError(error, ERROR_CODES.WORKER_LEASE_LOST)) {
          this.#leaseLost(error);
          break;
        }
        uncertain = true;
        if (!isOneWorksError(error, ERROR_CODES.STATE_UNAVAILABLE))
          this.#options.log(`worker ${this.#name}: claim failed: ${message(error)}`);
      }
      if (this.#kicked || this.#stopping) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, pollMs);
        function done(): void {
          clearTimeout(timer);
          resolve();
        }
        this.#wake = done;
      });
      this.#wake = undefined;
    }
  }

  #begin(request: ClaimedRequest): void {
    const live: LiveRequest = { request, cancelAsked: false, done: Promise.resolve() };
    this.#live.set(request.id, live);
    live.done = this.#serve(live)
      .catch((error: unknown) => this.#options.log(`worker ${this.#name}: request ${request.id} failed: ${message(error)}`))
      .finally(() => {
        this.#live.delete(request.id);
        this.#kick();
      });
  }

  // Accepts the request in the orchestrator, records the outcome, waits for the run, finishes.
  async #serve(live: LiveRequest): Promise<void> {
    const { request } = live;
    const { orchestrator, store } = this.#options;
    if (request.op === 'reconcile' || request.op === 'resolve') {
      // A person's request: done at once by the orchestrator that holds the session's record.
      let done: RequestResult;
      try {
        if (request.op === 'reconcile') await orchestrator.reconcileRun(request.request);
        else await orchestrator.resolveAttention(request.request.sessionId, request.request.note);
        done = { ok: true };
      } catch (error) {
        done = { error: errorResult(error) };
      }
      await this.#write(() => settleRequest(store, this.#name, request.id, done), request.id);
      return;
    }
    let result: RequestResult;
    let handle: TurnHandle | undefined;
    try {
      if (request.op === 'create') {
        const { sessionId, ...create } = request.request;
        handle = await orchestrator.createSessionWithId(create as CreateSessionRequest, sessionId);
      } else {
        handle = await orchestrator.sendMessage(request.request);
      }
      result = { handle };
    } catch (error) {
      result = { error: errorResult(error) };
    }
    if (handle) live.runId = handle.runId;
    const settled = await this.#write(() => settleRequest(store, this.#name, request.id, result), request.id);
    // A request that is not this worker's any more (its lease was lost) is left as expiry recorded it.
    if (!settled || !handle) return;
    if (live.cancelAsked) await orchestrator.cancel(handle.sessionId, handle.runId).catch(() => undefined);
    await orchestrator.waitForRun(handle.sessionId, handle.runId);
    await this.#write(() => finishRequest(store, this.#name, request.id), request.id);
  }

  // Cancels the live turns whose cancellation a client asked for.
  async #applyCancels(): Promise<void> {
    if (this.#live.size === 0) return;
    let asked: Array<{ id: number; sessionId: string }>;
    try {
      asked = await cancelRequested(this.#options.store, this.#name);
    } catch {
      return;
    }
    for (const { id, sessionId } of asked) {
      const live = this.#live.get(id);
      if (!live || live.cancelAsked) continue;
      live.cancelAsked = true;
      // Before acceptance the run id is unknown: #serve cancels it once accepted.
      if (live.runId !== undefined) void this.#options.orchestrator.cancel(sessionId, live.runId).catch(() => undefined);
    }
  }

  // A write of the loop, retried while the database is unreachable; false when the request is not this worker's any more.
  async #write(write: () => Promise<void>, requestId: number): Promise<boolean> {
    let refused = 0;
    for (let attempt = 0; ; attempt++) {
      try {
        await write();
        return true;
      } catch (error) {
        if (isOneWorksError(error, ERROR_CODES.WORKER_LEASE_LOST)) {
          // After a lost connection, the write may have committed (its reply lost): then it is done.
          if (attempt > 0) return true;
          this.#options.log(`worker ${this.#name}: request ${requestId} is no longer its claim (${message(error)})`);
          return false;
        }
        if (!isOneWorksError(error, ERROR_CODES.STATE_UNAVAILABLE)) {
          // A refused write (a bug): said, and tried a few times; then the request stays claimed
          // (its worker's next start records it unknown).
          this.#options.log(`worker ${this.#name}: writing request ${requestId} failed: ${message(error)}`);
          if (++refused >= MAX_REFUSED) return false;
          await new Promise((resolve) => setTimeout(resolve, RETRY_MS * 4));
          continue;
        }
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }

  #leaseLost(error: unknown): void {
    if (this.#lost) return;
    this.#lost = true;
    this.#kick();
    this.#options.onLeaseLost(error);
  }
}

// What a client's awaitAccepted rethrows: the orchestrator's code, message and data.
function errorResult(error: unknown): { code: string; message: string; data?: Record<string, unknown> } {
  if (isOneWorksError(error)) return { code: error.code, message: error.message, ...(error.data ? { data: error.data } : {}) };
  return { code: ERROR_CODES.INTERNAL, message: message(error) };
}

function message(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
