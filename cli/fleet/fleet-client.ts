import { setMaxListeners } from 'node:events';
import path from 'node:path';
import type { RuntimeEvent, TurnOutcome } from '../../core/events/index.js';
import { ERROR_CODES, OneWorksError, isOneWorksError } from '../../core/errors.js';
import { hashRequestArgs } from '../../core/orchestrator/request-keys.js';
import { readBounds, usageReport } from '../../core/orchestrator/session-detail.js';
import { sessionDetail } from '../../core/orchestrator/session-queries.js';
import { isTerminal, outcomeOfRun, summarize } from '../../core/orchestrator/session-summary.js';
import type {
  CreateSessionRequest,
  OrchestratorInfo,
  ReadSessionRequest,
  SendMessageRequest,
  SessionDetail,
  SessionSummary,
  TurnHandle,
  UsageReport,
  WaitResult,
} from '../../core/orchestrator/index.js';
import type { CorruptSession, PostgresStore, RunStatus, SessionRecord } from '../../core/store/index.js';
import { canonicalWorkspace } from '../../core/workspace/canonical-workspace.js';
import type { OrchestratorClient, ServerHello } from '../daemon/client.js';
import type { ServerIdentity } from '../daemon/liveness.js';
import type * as FleetQueueModule from '../../core/fleet/fleet-queue.js';
import type { FleetStatus, PersonRequest, QueuedRequest } from '../../core/fleet/fleet-queue.js';
import { type ReconcileRequest, reconcileRecord } from '../../core/session/reconcile.js';

/** The fleet queue's client functions (core/fleet/fleet-queue.ts), passed in so that they load with the client. */
export type FleetQueue = Pick<
  typeof FleetQueueModule,
  'submitCreate' | 'submitSend' | 'awaitAccepted' | 'requestCancel' | 'fleetStatus' | 'queuedRequests' | 'submitPersonRequest' | 'awaitDone'
>;

/** How often a waiting client reads again when no notification came (a notification wakes it at once). */
const RECHECK_MS = 1000;
/** How long a request with a key waits for the key's first request to be queued. */
const KEY_PENDING_MS = 10_000;
/** After how long a turn that no worker accepted yet is said to wait (FleetClient.onWaiting). */
const WAITING_NOTICE_MS = 2000;
/** The channels whose notifications (payload: a session id) wake a waiting client. */
const WAKE_CHANNELS = ['one_works_events', 'one_works_queue'] as const;

interface CreateFacts {
  adapter?: string;
  workspace?: string;
  title?: string;
}

/** What a fleet client may say of a session beyond its summary: a queued create, a lost worker. */
export type FleetState = 'queued' | 'worker_lost';

/** A session summary as the fleet sees it: `fleet` names a queued create or a session waiting on a lost worker. */
export type FleetSummary = SessionSummary & { fleet?: { state: FleetState; worker?: string } };

/** What a fleet client takes from its own config (for `info`). */
export interface FleetClientOptions {
  defaultAdapter: string;
  limits: Omit<OrchestratorInfo['limits'], 'maxConcurrentRuns'> & { fleetMaxConcurrentRuns?: number | undefined };
}

/**
 * The session commands' client when `state.backend` is postgres: the subset of
 * {@link OrchestratorClient} that run, send, submit, sessions, events, wait, cancel, status and
 * the MCP server use, over the database alone. Turns are queue rows (core/fleet/fleet-queue.ts)
 * that the fleet's workers (`serve --worker`) take; records, runs and events are read from the
 * {@link PostgresStore}; waits wake on the store's and the queue's notifications, with a slow
 * re-read as a fallback. Every other method throws `usage` naming the backend. No local
 * orchestrator is started or reached; the store is the caller's (it closes it).
 */
export class FleetClient implements OrchestratorClient {
  readonly #store: PostgresStore;
  readonly #queue: FleetQueue;
  readonly #closing = new AbortController();
  readonly #options: FleetClientOptions;

  constructor(store: PostgresStore, queue: FleetQueue, options: FleetClientOptions) {
    this.#store = store;
    this.#queue = queue;
    this.#options = options;
    // Every pending wait listens on it (an MCP server may have many calls waiting at once).
    setMaxListeners(0, this.#closing.signal);
  }

  /** Queues the create and resolves once a worker accepted it (its handle) or refused it (its error). */
  /**
   * Told (once per request) when a turn waits for a worker longer than {@link WAITING_NOTICE_MS}:
   * a busy fleet, no worker whose roots contain the workspace, or the session's worker lost.
   */
  onWaiting: ((sessionId: string) => void) | undefined;

  async createSession(request: CreateSessionRequest): Promise<TurnHandle> {
    const { requestId, sessionId } = await this.submitCreate(request);
    return this.#accepted(requestId, sessionId);
  }

  // The request's handle once a worker accepted it, telling onWaiting when that takes a while.
  async #accepted(requestId: number, sessionId: string): Promise<TurnHandle> {
    const timer = setTimeout(() => this.onWaiting?.(sessionId), WAITING_NOTICE_MS);
    try {
      return await this.#queue.awaitAccepted(this.#store, requestId, this.#closing.signal);
    } finally {
      clearTimeout(timer);
    }
  }

  // With a request key, the key's first request stands for every later one with the same
  // arguments (the same handle, never a second turn); other arguments: request_key_conflict. The
  // claim is a row of request_keys (`fleet:<key>`), taken before the request is queued.
  async #keyed(
    op: 'create' | 'send',
    request: { requestKey?: string | undefined; presentation?: unknown },
    submit: () => Promise<{ requestId: number; sessionId: string }>,
  ): Promise<{ requestId: number; sessionId: string }> {
    if (request.requestKey === undefined) return submit();
    const { requestKey, presentation: _presentation, ...args } = request;
    const key = `fleet:${requestKey}`;
    const argsHash = hashRequestArgs({ op, ...args });
    const claimed = await this.#store.withClient((client) =>
      client.query(
        "INSERT INTO request_keys (key, args_hash, kind, value) VALUES ($1, $2, 'pending', 'null') ON CONFLICT (key) DO NOTHING RETURNING key",
        [key, argsHash],
      ),
    );
    if ((claimed.rowCount ?? 0) > 0) {
      try {
        const submitted = await submit();
        await this.#store.saveRequestKey({ key, argsHash, kind: 'handle', value: submitted });
        return submitted;
      } catch (error) {
        await this.#store.removeRequestKey(key).catch(() => undefined);
        throw error;
      }
    }
    // Another request holds the key: its request once queued (a pending claim is being queued now).
    const deadline = Date.now() + KEY_PENDING_MS;
    for (;;) {
      const { rows } = await this.#store.withClient((client) =>
        client.query<{ args_hash: string; kind: string; value: { requestId?: number; sessionId?: string } | null }>(
          'SELECT args_hash, kind, value FROM request_keys WHERE key = $1',
          [key],
        ),
      );
      const row = rows[0];
      if (!row) return this.#keyed(op, request, submit);
      if (row.args_hash !== argsHash) {
        throw new OneWorksError(
          ERROR_CODES.REQUEST_KEY_CONFLICT,
          `request key ${requestKey} was used with other arguments; use a new key for a new request`,
          { data: { requestKey } },
        );
      }
      const { requestId, sessionId } = row.value ?? {};
      if (row.kind === 'handle' && typeof requestId === 'number' && typeof sessionId === 'string') return { requestId, sessionId };
      if (Date.now() > deadline) {
        throw new OneWorksError(
          ERROR_CODES.REQUEST_KEY_CONFLICT,
          `request key ${requestKey} is still being used by another request; retry`,
          {
            data: { requestKey },
          },
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /**
   * Queues the create and returns at once, before a worker takes it. The workspace is made
   * canonical when it exists on this host (workers route by their approved roots); a path that
   * only the workers' hosts have is passed as an absolute path, for them to check.
   */
  async submitCreate(request: CreateSessionRequest): Promise<{ requestId: number; sessionId: string }> {
    const workspace = await canonicalWorkspace(request.workspace).catch(() => path.resolve(request.workspace));
    const canonical = { ...request, workspace };
    return this.#keyed('create', canonical, () => this.#queue.submitCreate(this.#store, canonical));
  }

  /** The handle of a queued request once a worker accepted it (or the worker's error). */
  accepted(requestId: number, signal?: AbortSignal): Promise<TurnHandle> {
    return this.#queue.awaitAccepted(this.#store, requestId, signal ?? this.#closing.signal);
  }

  async sendMessage(request: SendMessageRequest): Promise<TurnHandle> {
    const { requestId } = await this.submitSend(request);
    return this.#accepted(requestId, request.sessionId);
  }

  /** Queues one more turn of a session and returns at once, before a worker takes it. */
  async submitSend(request: SendMessageRequest): Promise<{ requestId: number; sessionId: string }> {
    if (request.interrupt) throw unavailable('send --interrupt (steering)');
    // The session must exist (or be a queued create): a typo should not wait for a worker forever.
    await this.status(request.sessionId);
    return this.#keyed('send', request, () => this.#queue.submitSend(this.#store, request));
  }

  /**
   * Cancels the session's queued requests at once and asks the worker running its live turn to
   * cancel it (resolving when it did, or after the queue's bounded wait). A create cancelled
   * before any worker took it leaves no session: its summary then reads `closed`.
   */
  async cancel(sessionId: string, runId?: string): Promise<SessionSummary> {
    const before = await this.status(sessionId);
    await this.#queue.requestCancel(this.#store, sessionId, runId);
    try {
      return await this.status(sessionId);
    } catch (error) {
      if (!isOneWorksError(error, ERROR_CODES.SESSION_NOT_FOUND)) throw error;
      const { fleet: _fleet, ...rest } = before;
      return { ...rest, state: 'closed', queueDepth: 0 };
    }
  }

  // READ_ORDER: a summary reads the queue, then the record. A worker writes a finished turn's
  // record (its run terminal) before it marks the request `done` (core/fleet/fleet-worker.ts), so a
  // record read after the queue is at least as new: a session the queue shows settled has its
  // run's outcome in the record. Read side by side, a record read before the worker's write and a
  // queue read after its `done` made an idle session whose latest run was still `running` (a
  // `wait` returned before the outcome was there; seen in the fleet bench).
  async status(sessionId: string): Promise<FleetSummary> {
    // The queue first, the record after it (see READ_ORDER).
    const [requests, lost] = await Promise.all([this.#queue.queuedRequests(this.#store, sessionId), this.#lost()]);
    const record = await this.#record(sessionId);
    const creates = record ? new Map() : await this.#creates(requests);
    const summary = this.#summary(sessionId, record, requests, lost, creates);
    if (!summary) {
      throw new OneWorksError(ERROR_CODES.SESSION_NOT_FOUND, `no session ${sessionId} in the fleet's state database ${this.#store.where}`, {
        data: { sessionId },
      });
    }
    return summary;
  }

  async list(): Promise<FleetSummary[]> {
    // The queue first, the records after it (see READ_ORDER).
    const [requests, lost] = await Promise.all([this.#queue.queuedRequests(this.#store), this.#lost()]);
    const records = await this.#store.listSessions();
    const bySession = new Map<string, QueuedRequest[]>();
    for (const request of requests) bySession.set(request.sessionId, [...(bySession.get(request.sessionId) ?? []), request]);
    const out: FleetSummary[] = [];
    for (const record of records) {
      const summary = this.#summary(record.id, record, bySession.get(record.id) ?? [], lost, new Map());
      if (summary) out.push(summary);
      bySession.delete(record.id);
    }
    // Creates no worker took yet: sessions without a record.
    const creates = await this.#creates([...bySession.values()].flat());
    for (const [sessionId, pending] of bySession) {
      const summary = this.#summary(sessionId, undefined, pending, lost, creates);
      if (summary) out.push(summary);
    }
    return out;
  }

  /** The fleet's workers, leases, load and queue (`one-works fleet`). */
  fleetStatus(): Promise<FleetStatus> {
    return this.#queue.fleetStatus(this.#store);
  }

  async corruptSessions(): Promise<CorruptSession[]> {
    return (await this.#store.scanSessions()).corrupt;
  }

  /** Resolves when every session has no live or queued turn, or after `timeoutMs` (`timedOut`). */
  async wait(sessionIds: string[], timeoutMs: number): Promise<WaitResult> {
    for (const id of sessionIds) await this.status(id);
    let last: FleetSummary[] = [];
    const settled = await this.#waitUntil(sessionIds, timeoutMs, async () => {
      last = await Promise.all(sessionIds.map((id) => this.status(id)));
      return last.every((summary) => summary.state !== 'working');
    });
    return {
      settled: last.filter((summary) => summary.state !== 'working'),
      pending: last.filter((summary) => summary.state === 'working'),
      timedOut: !settled,
    };
  }

  /** The run's outcome once it is terminal (a run of a lost worker ends `unknown`). */
  async waitForRun(sessionId: string, runId: string): Promise<TurnOutcome & { runStatus: RunStatus }> {
    let outcome: (TurnOutcome & { runStatus: RunStatus }) | undefined;
    await this.#waitUntil([sessionId], Number.POSITIVE_INFINITY, async () => {
      const run = (await this.#store.readSession(sessionId)).runs.find((r) => r.id === runId);
      if (!run) throw new OneWorksError(ERROR_CODES.USAGE, `session ${sessionId} has no run ${runId}`, { data: { sessionId, runId } });
      if (isTerminal(run.status)) outcome = outcomeOfRun(run);
      return outcome !== undefined;
    });
    if (!outcome) throw closedError();
    return outcome;
  }

  /** The session's events appended from now on, in order and with no gap (the store's follow). */
  async subscribe(sessionId: string, listener: (event: RuntimeEvent) => void): Promise<() => Promise<void>> {
    const { lastSeq } = await this.#store.eventIndex(sessionId);
    const stop = new AbortController();
    const closing = this.#closing.signal;
    const onClose = (): void => stop.abort();
    closing.addEventListener('abort', onClose, { once: true });
    const done = (async () => {
      try {
        for await (const event of this.#store.followEvents(sessionId, { afterSeq: lastSeq, signal: stop.signal })) listener(event);
      } catch {
        // The follow ends with the store; the turn's outcome comes from waitForRun.
      } finally {
        closing.removeEventListener('abort', onClose);
      }
    })();
    return async () => {
      stop.abort();
      await done;
    };
  }

  async readSession(request: ReadSessionRequest): Promise<SessionDetail> {
    const bounds = readBounds(request);
    const summary = await this.status(request.sessionId);
    const record = await this.#record(request.sessionId);
    if (!record) return { summary, events: [], eventsTruncated: false, pendingQuestions: [] };
    return sessionDetail(record, summary, await this.#store.readEvents(request.sessionId), bounds);
  }

  async usage(sessionIds?: string[]): Promise<UsageReport> {
    if (!sessionIds) return usageReport(await this.#store.listSessions());
    return usageReport(await Promise.all(sessionIds.map((id) => this.#store.readSession(id))));
  }

  /**
   * The fleet as one orchestrator: the approved roots of its live workers (a new session's
   * workspace must be inside one), their summed maxConcurrentRuns (capped by the fleet's limit
   * when this client's config sets one), the queue's activity; the other limits are this
   * client's config's (each worker applies its own). Adapters are the workers' to know: none is
   * listed, and the default adapter is this client's.
   */
  async info(): Promise<OrchestratorInfo> {
    const status = await this.#queue.fleetStatus(this.#store);
    const alive = status.workers.filter((w) => w.alive);
    const capacity = alive.reduce((sum, w) => sum + w.maxConcurrentRuns, 0);
    const { fleetMaxConcurrentRuns, ...limits } = this.#options.limits;
    return {
      approvedRoots: [...new Set(alive.flatMap((w) => w.approvedRoots))].sort(),
      limits: { ...limits, maxConcurrentRuns: Math.min(capacity, fleetMaxConcurrentRuns ?? capacity) },
      activity: { live: status.queue.claimed, queued: status.queue.queued },
      adapters: [],
      defaultAdapter: this.#options.defaultAdapter,
    };
  }

  /**
   * `sessions reconcile` on a fleet: queued for the worker holding the session's HOME (its
   * orchestrator keeps the record), FIFO after the session's earlier requests; resolves with the
   * summary once that worker did it, or throws its orchestrator's error. Waits for a lost worker
   * until it is back (onWaiting is told).
   */
  async reconcileRun(request: ReconcileRequest): Promise<SessionSummary> {
    await this.status(request.sessionId);
    await this.#refuseAtOnce(request);
    return this.#personRequest({ op: 'reconcile', request });
  }

  // What the worker would refuse, refused now rather than after the session's earlier requests:
  // a run that does not exist or whose outcome is known (reconcileRecord's errors), or one that
  // is live on a worker whose lease is live. A run left live by a lost worker is queued: its
  // worker settles it unknown when it is back, then reconciles it.
  async #refuseAtOnce(request: ReconcileRequest): Promise<void> {
    const record = await this.#record(request.sessionId);
    const run = record?.runs.find((r) => r.id === request.runId);
    if (!record || !run) {
      if (record) reconcileRecord(record, request);
      return;
    }
    if (run.status !== 'running' && run.status !== 'queued') {
      if (run.status !== 'unknown') reconcileRecord(record, request);
      return;
    }
    const [requests, status] = await Promise.all([
      this.#queue.queuedRequests(this.#store, request.sessionId),
      this.#queue.fleetStatus(this.#store),
    ]);
    const alive = new Set(status.workers.filter((w) => w.alive).map((w) => w.name));
    const live = requests.find((r) => r.state === 'claimed' && r.runId === request.runId && r.worker !== undefined && alive.has(r.worker));
    if (live) {
      throw new OneWorksError(
        ERROR_CODES.USAGE,
        `run ${request.runId} of session ${request.sessionId} is still queued or running (on worker ${live.worker})`,
        { data: { ...request, worker: live.worker } },
      );
    }
  }

  /** `sessions resolve` on a fleet: routed like {@link reconcileRun}. */
  async resolveAttention(sessionId: string, note?: string): Promise<SessionSummary> {
    await this.status(sessionId);
    return this.#personRequest({ op: 'resolve', request: { sessionId, ...(note === undefined ? {} : { note }) } });
  }

  async #personRequest(person: PersonRequest): Promise<SessionSummary> {
    const { requestId, sessionId } = await this.#queue.submitPersonRequest(this.#store, person);
    const timer = setTimeout(() => this.onWaiting?.(sessionId), WAITING_NOTICE_MS);
    try {
      await this.#queue.awaitDone(this.#store, requestId, this.#closing.signal);
    } finally {
      clearTimeout(timer);
    }
    const { fleet: _fleet, ...summary } = await this.status(sessionId);
    return summary;
  }

  // Asks are answered on the worker that runs the turn; a fleet client has no channel to them.
  attachEscalator(): Promise<void> {
    return Promise.resolve();
  }

  /** A fleet client greets no server: there is none. */
  readonly greeting: ServerHello | undefined = undefined;

  server(): ServerIdentity {
    return { socketPath: this.#store.where };
  }

  async close(): Promise<void> {
    this.#closing.abort();
  }

  // Unavailable in a fleet: each needs the host that holds the session (its HOME, its worktree, its asks).
  updateSession(): never {
    throw unavailable('update_session');
  }
  listAsks(): never {
    throw unavailable('asks');
  }
  answerAsk(): never {
    throw unavailable('answer');
  }
  models(): never {
    throw unavailable('models');
  }
  forkSession(): never {
    throw unavailable('fork');
  }
  importSession(): never {
    throw unavailable('import');
  }
  diffSession(): never {
    throw unavailable('diff');
  }
  mergeSession(): never {
    throw unavailable('merge');
  }
  discardSession(): never {
    throw unavailable('discard');
  }
  checkSession(): never {
    throw unavailable('compare');
  }
  removeSession(): never {
    throw unavailable('sessions rm');
  }
  hello(): never {
    throw unavailable('server');
  }
  exitIfIdle(): never {
    throw unavailable('server');
  }
  shutdown(): never {
    throw unavailable('server stop');
  }

  async #record(sessionId: string): Promise<SessionRecord | undefined> {
    try {
      return await this.#store.readSession(sessionId);
    } catch (error) {
      if (isOneWorksError(error, ERROR_CODES.SESSION_NOT_FOUND)) return undefined;
      throw error;
    }
  }

  async #lost(): Promise<Map<string, string>> {
    const status = await this.#queue.fleetStatus(this.#store);
    return new Map(status.waitingOnLostWorkers.map((w) => [w.sessionId, w.worker]));
  }

  // The adapter, workspace and title of queued creates (no record exists before a worker takes them).
  async #creates(requests: readonly QueuedRequest[]): Promise<Map<number, CreateFacts>> {
    const ids = requests.filter((r) => r.op === 'create').map((r) => r.requestId);
    if (ids.length === 0) return new Map();
    const { rows } = await this.#store.withClient((client) =>
      client.query<{ id: string; request: Partial<CreateSessionRequest> | null }>(
        'SELECT id, request FROM queue WHERE id = ANY($1::bigint[])',
        [ids],
      ),
    );
    return new Map(
      rows.map((row) => [
        Number(row.id),
        {
          ...(typeof row.request?.adapter === 'string' ? { adapter: row.request.adapter } : {}),
          ...(typeof row.request?.workspace === 'string' ? { workspace: row.request.workspace } : {}),
          ...(typeof row.request?.title === 'string' ? { title: row.request.title } : {}),
        },
      ]),
    );
  }

  // The summary of a session from its record (if any), its queue rows and the lost workers' sessions.
  #summary(
    sessionId: string,
    record: SessionRecord | undefined,
    requests: readonly QueuedRequest[],
    lost: ReadonlyMap<string, string>,
    creates: ReadonlyMap<number, CreateFacts>,
  ): FleetSummary | undefined {
    const queued = requests.filter((r) => r.state === 'queued').length;
    const live = requests.some((r) => r.state === 'claimed');
    const lostWorker = lost.get(sessionId);
    const fleet = lostWorker !== undefined ? { fleet: { state: 'worker_lost' as const, worker: lostWorker } } : {};
    if (record) return { ...summarize(record, { live, queued }), ...fleet };
    const create = requests.find((r) => r.op === 'create');
    if (!create) return undefined;
    const facts = creates.get(create.requestId);
    return {
      sessionId,
      adapter: facts?.adapter ?? 'unknown',
      workspace: facts?.workspace ?? '',
      ...(facts?.title ? { title: facts.title } : {}),
      createdAt: create.submittedAt,
      updatedAt: create.submittedAt,
      state: 'working',
      queueDepth: queued,
      ...(lostWorker !== undefined ? fleet : { fleet: { state: 'queued' as const } }),
    };
  }

  // Runs `check` now and again on each notification about these sessions (or every RECHECK_MS)
  // until it is true (resolves true) or `timeoutMs` passed (false). The store's shared LISTEN
  // connections wake it (no pooled connection is held while waiting). A database that does not
  // answer is a pause: the next check retries.
  async #waitUntil(sessionIds: readonly string[], timeoutMs: number, check: () => Promise<boolean>): Promise<boolean> {
    const wanted = new Set(sessionIds);
    const deadline = Date.now() + timeoutMs;
    const closing = this.#closing.signal;
    let wake: (() => void) | undefined;
    let notified = false;
    const onNotify = (payload: string | undefined): void => {
      // No payload: the listening connection was made again, and notifications may have been missed.
      if (payload !== undefined && !wanted.has(payload)) return;
      notified = true;
      wake?.();
    };
    const stops = WAKE_CHANNELS.map((channel) => this.#store.listen(channel, onNotify));
    try {
      for (;;) {
        notified = false;
        const done = await check().catch((error: unknown) => {
          if (isOneWorksError(error, ERROR_CODES.STATE_UNAVAILABLE)) return false;
          throw error;
        });
        if (done) return true;
        const left = deadline - Date.now();
        if (left <= 0 || closing.aborted) return false;
        if (notified) continue;
        await new Promise<void>((resolve) => {
          const finish = (): void => {
            clearTimeout(timer);
            closing.removeEventListener('abort', finish);
            wake = undefined;
            resolve();
          };
          const timer = setTimeout(finish, Math.min(left, RECHECK_MS));
          closing.addEventListener('abort', finish, { once: true });
          wake = finish;
        });
      }
    } finally {
      for (const stop of stops) stop();
    }
  }
}

/** The `usage` error of a command or tool that needs a host's orchestrator, with state.backend postgres. */
export function unavailable(what: string): OneWorksError {
  return new OneWorksError(
    ERROR_CODES.USAGE,
    `${what} is not available with state.backend postgres (a fleet): the fleet commands are run, send, submit, send-queued, sessions, events, wait, cancel, mcp and fleet; use state.backend: file for the others`,
    { data: { backend: 'postgres' } },
  );
}

function closedError(): OneWorksError {
  return new OneWorksError(ERROR_CODES.CONNECTION_CLOSED, 'the fleet client was closed while it waited');
}
