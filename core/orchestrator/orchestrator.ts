import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import type { CatalogModel } from '../catalog/index.js';
import { ERROR_CODES, OneWorksError } from '../errors.js';
import type { RuntimeEvent, TurnOutcome } from '../events/index.js';
import { Redactor } from '../redact.js';
import { recoverInterruptedRuns } from '../session/index.js';
import type { RunRecord, RunStatus, SessionRecord } from '../store/index.js';
import { checkApproved } from '../workspace/index.js';
import { CATALOG_DEADLINE_MS, boundedModelsFor } from './catalog-deadline.js';
import { ChangeSignal } from './change-signal.js';
import { createAdmission, isWriter, type Admission } from './admission.js';
import { chosenModel, launchNotes, resolveCreateSettings, resolveSendSettings } from './launch-settings.js';
import { OrchestratorLimitsSchema, type OrchestratorDeps } from './orchestrator-deps.js';
import { requestKeyFile } from './request-key-file.js';
import { RequestKeyRegistry, normalizeRequestArgs } from './request-keys.js';
import { RunnerStore } from './runner-store.js';
import { SessionBook } from './session-book.js';
import { readBounds, usageReport } from './session-detail.js';
import { applyMetadata, checkMetadata } from './session-metadata.js';
import { lastAcceptedSettings, newSessionRecord } from './new-turn.js';
import { catalogModels, orchestratorInfo, sessionDetail, withCatalog } from './session-queries.js';
import { SessionSlot, Turn } from './session-slot.js';
import { assertKnownOutcome, cancelRuns, isTerminal, outcomeOfRun, summarize } from './session-summary.js';
import { executeTurn } from './turn-execution.js';
import { PendingTurnSchema, StoredHandleSchema, completeHandle, settledHandle, type PendingTurn, type StoredHandle } from './turn-handles.js';
import type {
  CreateSessionRequest,
  EffectiveSettings,
  OrchestratorApi,
  OrchestratorInfo,
  ReadSessionRequest,
  SendMessageRequest,
  SessionDetail,
  SessionSummary,
  TurnHandle,
  UpdateSessionRequest,
  UsageReport,
  WaitResult,
} from './types.js';

/** The in-process orchestrator: the API plus `shutdown`. */
export interface Orchestrator extends OrchestratorApi {
  /** Refuses new turns, cancels every queued and live turn, and resolves once every child is gone. */
  shutdown(): Promise<void>;
}

/**
 * Starts an orchestrator over `deps.store`: first recovers what a dead owner left (queued runs
 * become `cancelled`/`queue_lost`, running ones `unknown`, see `recoverInterruptedRuns`), then
 * loads the durable request keys (`<state>/request-keys.json`). The caller owns the state
 * directory (`store.acquireOwner`) before calling this and calls `shutdown()` before releasing it.
 * Throws `internal` for invalid limits and `state_corrupt` for a malformed request-key file.
 */
export async function createOrchestrator(deps: OrchestratorDeps): Promise<Orchestrator> {
  const limits = OrchestratorLimitsSchema.safeParse(deps.limits);
  if (!limits.success) throw new OneWorksError(ERROR_CODES.INTERNAL, `invalid orchestrator limits: ${z.prettifyError(limits.error)}`);
  await recoverInterruptedRuns(deps.store, { stateDir: deps.stateDir });
  const keys = await RequestKeyRegistry.open(requestKeyFile(deps.stateDir), StoredHandleSchema, PendingTurnSchema);
  // A key reserved by a dead owner: its handle when the turn was recorded, else unclaimed.
  await keys.settlePending((pending) => settledHandle(deps.store, pending));
  const modelsFor = deps.modelsFor && boundedModelsFor(deps.modelsFor.bind(deps), deps.catalogDeadlineMs ?? CATALOG_DEADLINE_MS);
  return new InProcessOrchestrator({ ...deps, limits: limits.data, ...(modelsFor ? { modelsFor } : {}) }, keys);
}

type Reserve = (pending: PendingTurn) => Promise<void>;

interface AcceptOptions {
  interrupt: boolean;
  notes: string[];
  reserve?: Reserve | undefined;
}

class InProcessOrchestrator implements Orchestrator {
  readonly #deps: OrchestratorDeps;
  readonly #keys: RequestKeyRegistry<StoredHandle, PendingTurn>;
  readonly #admission: Admission;
  readonly #redactor = new Redactor();
  readonly #slots = new Map<string, SessionSlot>();
  readonly #loading = new Map<string, Promise<SessionSlot>>();
  readonly #runnerStore: RunnerStore;
  readonly #signal = new ChangeSignal();
  #closing = false;

  constructor(deps: OrchestratorDeps, keys: RequestKeyRegistry<StoredHandle, PendingTurn>) {
    this.#deps = deps;
    this.#keys = keys;
    const { maxConcurrentRuns, maxQueuedTotal, maxQueuedPerSession } = deps.limits;
    this.#admission = createAdmission({ maxConcurrentRuns, maxQueuedTotal, maxQueuedPerSession });
    for (const secret of deps.secrets ?? []) this.#redactor.register(secret);
    this.#runnerStore = new RunnerStore(deps.store, (sessionId) => {
      const slot = this.#slots.get(sessionId);
      return slot ? { book: slot.book, base: slot.runnerBase } : undefined;
    });
  }

  async createSession(request: CreateSessionRequest): Promise<TurnHandle> {
    this.#assertOpen();
    const defaults = this.#deps.defaultsFor(request.adapter);
    const workspace = await checkApproved(request.workspace, this.#deps.approvedRoots, this.#deps.approvalSource);
    const { labels } = checkMetadata(request);
    const { requestKey, ...args } = request;
    return this.#withKey(requestKey, { op: 'create', ...args, workspace }, async (reserve) => {
      let notes: string[] = [];
      const settings = await withCatalog(this.#deps, request.adapter, () => chosenModel(request, defaults), (models) => {
        const resolved = resolveCreateSettings(request, defaults, models);
        notes = launchNotes(request, resolved, models);
        return resolved;
      });
      const record = newSessionRecord(await this.#newSessionId(), workspace, { ...request, labels }, settings);
      const slot = new SessionSlot(this.#newBook(record, 0));
      return this.#accept(slot, request.prompt, settings, { interrupt: false, notes, reserve });
    });
  }

  async sendMessage(request: SendMessageRequest): Promise<TurnHandle> {
    this.#assertOpen();
    const slot = await this.#slot(request.sessionId);
    const { requestKey, ...args } = request;
    return this.#withKey(requestKey, { op: 'send', ...args }, async (reserve) => {
      const adapter = slot.book.record.adapter;
      const previous = (): EffectiveSettings => lastAcceptedSettings(slot.book.record, () => this.#deps.defaultsFor(adapter));
      assertKnownOutcome(slot.book.record);
      let notes: string[] = [];
      const settings = await withCatalog(this.#deps, adapter, () => chosenModel(request, previous()), (models) => {
        assertKnownOutcome(slot.book.record);
        const resolved = resolveSendSettings(request, previous(), models);
        notes = launchNotes(request, resolved, models);
        return resolved;
      });
      return this.#accept(slot, request.prompt, settings, { interrupt: request.interrupt === true, notes, reserve });
    });
  }

  async cancel(sessionId: string, runId?: string): Promise<SessionSummary> {
    const slot = await this.#slot(sessionId);
    if (runId !== undefined && !slot.book.record.runs.some((run) => run.id === runId)) {
      throw new OneWorksError(ERROR_CODES.USAGE, `session ${sessionId} has no run ${runId}`, { data: { sessionId, runId } });
    }
    const only = runId === undefined ? undefined : slot.turns.get(runId);
    if (runId !== undefined && !only) return this.#summary(slot);
    const queued = only ? [this.#admission.cancelQueued(only.turnId)].filter((r) => r !== undefined) : this.#admission.dropSession(sessionId);
    await this.#cancelQueued(slot, queued, 'cancelled');
    const live = only ? (slot.turns.has(only.runId) ? [only] : []) : [...slot.turns.values()];
    for (const turn of live) turn.requestCancel();
    await Promise.all(live.map((turn) => turn.done));
    await slot.book.flush();
    return this.#summary(slot);
  }

  async status(sessionId: string): Promise<SessionSummary> {
    return this.#summary(await this.#slot(sessionId));
  }

  async list(): Promise<SessionSummary[]> {
    const records = await this.#deps.store.listSessions();
    const seen = new Set<string>();
    const out = records.map((record) => {
      seen.add(record.id);
      const slot = this.#slots.get(record.id);
      return slot ? this.#summary(slot) : summarize(record, { live: false, queued: 0 });
    });
    for (const slot of this.#slots.values()) if (!seen.has(slot.id)) out.push(this.#summary(slot));
    return out;
  }

  async wait(sessionIds: string[], timeoutMs: number): Promise<WaitResult> {
    const slots = await Promise.all(sessionIds.map((id) => this.#slot(id)));
    const timedOut = !(await this.#until(() => slots.every((slot) => slot.turns.size === 0), timeoutMs));
    const summaries = slots.map((slot) => this.#summary(slot));
    return {
      settled: summaries.filter((summary) => summary.state !== 'working'),
      pending: summaries.filter((summary) => summary.state === 'working'),
      timedOut,
    };
  }

  async waitForRun(sessionId: string, runId: string): Promise<TurnOutcome & { runStatus: RunStatus }> {
    const slot = await this.#slot(sessionId);
    const run = (): RunRecord | undefined => slot.book.record.runs.find((r) => r.id === runId);
    if (!run()) throw new OneWorksError(ERROR_CODES.USAGE, `session ${sessionId} has no run ${runId}`, { data: { sessionId, runId } });
    await this.#until(() => isTerminal(run()!.status) && !slot.turns.has(runId), Infinity);
    return outcomeOfRun(run()!);
  }

  subscribe(sessionId: string, listener: (event: RuntimeEvent) => void): () => void {
    const loaded = this.#slots.get(sessionId);
    if (loaded) return loaded.book.subscribe(listener);
    let unsubscribe: (() => void) | undefined;
    let cancelled = false;
    this.#slot(sessionId).then(
      (slot) => {
        if (!cancelled) unsubscribe = slot.book.subscribe(listener);
      },
      () => undefined,
    );
    return () => {
      cancelled = true;
      unsubscribe?.();
    };
  }

  activity(): { live: number; queued: number } {
    const snapshot = this.#admission.snapshot();
    return { live: snapshot.live.length, queued: snapshot.queued.length };
  }

  async updateSession(request: UpdateSessionRequest): Promise<SessionSummary> {
    const { sessionId, ...update } = request;
    checkMetadata(update);
    const slot = await this.#slot(sessionId);
    await slot.book.update((record) => applyMetadata(record, update));
    return this.#summary(slot);
  }

  async readSession(request: ReadSessionRequest): Promise<SessionDetail> {
    const bounds = readBounds(request);
    const slot = await this.#slot(request.sessionId);
    // Persisted events only: the log may lag the live stream by the events in flight.
    const log = await this.#deps.store.readEvents(request.sessionId);
    return sessionDetail(slot.book.record, this.#summary(slot), log, bounds);
  }

  async usage(sessionIds?: string[]): Promise<UsageReport> {
    if (sessionIds) return usageReport(await Promise.all(sessionIds.map(async (id) => (await this.#slot(id)).book.record)));
    const stored = await this.#deps.store.listSessions();
    const records = stored.map((record) => this.#slots.get(record.id)?.book.record ?? record);
    for (const slot of this.#slots.values()) if (!stored.some((r) => r.id === slot.id)) records.push(slot.book.record);
    return usageReport(records);
  }

  async info(): Promise<OrchestratorInfo> {
    return orchestratorInfo(this.#deps, this.activity());
  }

  async models(adapter: string): Promise<CatalogModel[]> {
    return catalogModels(this.#deps, adapter);
  }

  async shutdown(): Promise<void> {
    this.#closing = true;
    await Promise.all([...this.#slots.values()].map((slot) => this.cancel(slot.id)));
    await Promise.all([...this.#slots.values()].map(async (slot) => {
      await slot.closeRunner('shutdown');
      await slot.book.flush();
    }));
  }

  // Records the turn as queued and hands it to admission. The bounds are checked first, so a
  // refused turn (queue_full) leaves no trace; a started turn waits for its record to be written.
  // A failed write is undone in memory (admission, the slot's turns, the queued run, a new
  // session's slot), so nothing waits for a turn the caller was told failed.
  // `notes` (launchNotes) follow `turn.queued` as warn log events, for the client to show.
  // `reserve` (a request key's) makes the turn's ids durable before its record is written.
  async #accept(slot: SessionSlot, prompt: string, settings: EffectiveSettings, options: AcceptOptions): Promise<TurnHandle> {
    const record = slot.book.record;
    const turn = new Turn(record.id, `r${record.runs.length + 1}`, prompt, settings);
    this.#admission.enqueue({ turnId: turn.turnId, sessionId: record.id, workspace: record.workspace, writer: isWriter(settings.autonomy) });
    const isNew = !this.#slots.has(slot.id);
    this.#slots.set(slot.id, slot);
    slot.turns.set(turn.runId, turn);
    const queued: RunRecord = { id: turn.runId, prompt: this.#redactor.redact(prompt), ...settings, status: 'queued' };
    const reserved = options.reserve?.({ sessionId: slot.id, runId: turn.runId });
    turn.recorded = slot.book.update((current) => ({ ...current, runs: [...current.runs, queued] }), reserved);
    slot.book.emit({ type: 'turn.queued', key: `turn:${turn.runId}:queued`, runId: turn.runId, prompt });
    options.notes.forEach((note, index) => slot.book.emit({ type: 'log', key: `turn:${turn.runId}:note:${index}`, level: 'warn', message: `note: ${note}` }));
    try {
      await turn.recorded;
    } catch (error) {
      // A turn admission started meanwhile releases itself (executeTurn sees `recorded` reject).
      this.#admission.cancelQueued(turn.turnId);
      slot.turns.delete(turn.runId);
      slot.book.forgetRun(turn.runId);
      if (isNew) this.#slots.delete(slot.id);
      this.#changed();
      throw error;
    }
    if (options.interrupt) {
      await this.#cancelQueued(slot, this.#admission.supersede(slot.id, turn.turnId), 'superseded');
      for (const other of slot.turns.values()) if (other !== turn && this.#admission.stateOf(other.turnId) === 'live') other.requestCancel();
    }
    this.#pump();
    return { sessionId: slot.id, runId: turn.runId, state: this.#admission.stateOf(turn.turnId) === 'live' ? 'running' : 'queued', settings };
  }

  // Starts every turn admission lets start now.
  #pump(): void {
    for (const request of this.#admission.next()) {
      const slot = this.#slots.get(request.sessionId)!;
      const turn = [...slot.turns.values()].find((t) => t.turnId === request.turnId)!;
      turn.done = executeTurn({
        slot,
        turn,
        admission: this.#admission,
        store: this.#runnerStore,
        deps: this.#deps,
        closing: () => this.#closing,
        cancelQueued: (requests, reason) => this.#cancelQueued(slot, requests, reason),
      }).finally(() => {
        this.#changed();
        this.#pump();
      });
    }
    this.#changed();
  }

  async #cancelQueued(slot: SessionSlot, requests: ReadonlyArray<{ turnId: string }>, reason: string): Promise<void> {
    if (requests.length === 0) return;
    const runIds = new Set([...slot.turns.values()].filter((t) => requests.some((r) => r.turnId === t.turnId)).map((t) => t.runId));
    for (const runId of runIds) slot.turns.delete(runId);
    const write = slot.book.update((record) => cancelRuns(record, runIds, reason, new Date().toISOString()));
    slot.book.emit({ type: 'log', key: `runs:${[...runIds].join(',')}:${reason}`, level: 'info', message: `run ${[...runIds].join(', ')} cancelled: ${reason}` });
    await write;
    // A runner kept open for these turns is no longer needed.
    if (slot.turns.size === 0) await slot.closeRunner('idle');
  }

  #summary(slot: SessionSlot): SessionSummary {
    const live = [...slot.turns.values()].some((turn) => this.#admission.stateOf(turn.turnId) === 'live');
    return summarize(slot.book.record, { live, queued: slot.turns.size - (live ? 1 : 0) });
  }

  async #slot(sessionId: string): Promise<SessionSlot> {
    const known = this.#slots.get(sessionId);
    if (known) return known;
    let loading = this.#loading.get(sessionId);
    if (!loading) {
      loading = (async () => {
        const record = await this.#deps.store.readSession(sessionId);
        const { lastSeq } = await this.#deps.store.eventIndex(sessionId);
        const slot = this.#slots.get(sessionId) ?? new SessionSlot(this.#newBook(record, lastSeq));
        this.#slots.set(sessionId, slot);
        return slot;
      })().finally(() => this.#loading.delete(sessionId));
      this.#loading.set(sessionId, loading);
    }
    return loading;
  }

  #newBook(record: SessionRecord, lastSeq: number): SessionBook {
    return new SessionBook({ store: this.#deps.store, record, lastSeq, redactor: this.#redactor, onChange: () => this.#changed() });
  }

  async #withKey(requestKey: string | undefined, args: Record<string, unknown>, make: (reserve?: Reserve) => Promise<TurnHandle>): Promise<TurnHandle> {
    if (requestKey === undefined) return make();
    const handle = await this.#keys.claim(requestKey, normalizeRequestArgs(args), make);
    if (handle.settings) return { ...handle, settings: handle.settings };
    const { record } = (await this.#slot(handle.sessionId)).book;
    return completeHandle(handle, record, () => this.#deps.defaultsFor(record.adapter).autonomy);
  }

  async #newSessionId(): Promise<string> {
    for (;;) {
      const id = `s-${randomBytes(5).toString('hex')}`;
      if (!this.#slots.has(id) && !(await this.#deps.store.hasSession(id))) return id;
    }
  }

  #assertOpen(): void {
    if (this.#closing) throw new OneWorksError(ERROR_CODES.ORCHESTRATOR_STOPPING, 'the orchestrator is shutting down and accepts no new turns; retry shortly (the next command starts a new one)');
  }

  #changed(): void {
    this.#signal.changed();
  }

  #until(done: () => boolean, timeoutMs: number): Promise<boolean> {
    return this.#signal.until(done, timeoutMs);
  }
}
