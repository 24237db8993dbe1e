import { claimLaunchedAhead } from '../session/launch-ahead.js';
import { z } from 'zod';
import type { CatalogModel } from '../catalog/index.js';
import { randomBytes } from 'node:crypto';
import { ERROR_CODES, OneWorksError } from '../errors.js';
import { mergePolicies, type AnsweredAsk, type AskAnswer, type OpenAsk } from '../permissions/index.js';
import type { RuntimeEvent, TurnOutcome } from '../events/index.js';
import type { PresentationEnv } from '../process/index.js';
import { Redactor } from '../redact.js';
import { reconcileRecord, recoverSessions, type ReconcileRequest } from '../session/index.js';
import type { CorruptSession, RunRecord, RunStatus, SessionRecord } from '../store/index.js';
import { acceptTurn, steerLiveTurn, withRequestKey, type Reserve } from './acceptance.js';
import { createAdmission, isWriter, type Admission } from './admission.js';
import { cancelQueued, cancelTurns } from './cancellation.js';
import { CATALOG_DEADLINE_MS, boundedModelsFor } from './catalog-deadline.js';
import { ChangeSignal } from './change-signal.js';
import { chosenModel, launchNotes, needsCatalog, resolveCreateSettings, resolveSendSettings } from './launch-settings.js';
import { lastAcceptedSettings, newSessionRecord } from './new-turn.js';
import { loadSlot, newBook, newSessionId, slotSummary, subscribeSlot, type OrchestratorContext } from './orchestrator-context.js';
import { OrchestratorLimitsSchema, type AdapterDefaults, type OrchestratorDeps } from './orchestrator-deps.js';
import { requestKeyFile } from './request-key-file.js';
import { RequestKeyRegistry } from './request-keys.js';
import { RunnerStore } from './runner-store.js';
import { applyMetadata, checkMetadata, checkPrompt } from './session-metadata.js';
import { catalogModels, listSummaries, orchestratorInfo, readSessionDetail, sessionUsage, withCatalog } from './session-queries.js';
import { SessionSlot } from './session-slot.js';
import { assertKnownOutcome, isTerminal, outcomeOfRun } from './session-summary.js';
import { READY_TIMEOUT_MS, executeTurn, openSessionRunner } from './turn-execution.js';
import { PrewarmPool, type EarlyAgent, type PrewarmTarget, type StagedSession } from './prewarm.js';
import { INTENT_WINDOW_MS, matchesIntent, type IntentFacts, type SessionIntent } from './intent.js';
import { importSession } from './import-session.js';
import { buildForkSeed } from './fork-seed.js';
import { sessionDir } from '../store/index.js';
import { checkApproved } from '../workspace/index.js';
import { createWarmAgents, type WarmAgents, type WarmCloseReason } from './warm-agents.js';
import { PendingTurnSchema, StoredHandleSchema, settledHandle, type PendingTurn, type StoredHandle } from './turn-handles.js';
import {
  approveWorkspace,
  assertWorktreePresent,
  checkSession,
  diffSession,
  discardSession,
  makeWorktree,
  mergeSession,
  undoWorktree,
} from './worktree-ops.js';
import type {
  CheckSessionRequest,
  DiffSessionRequest,
  MergeSessionRequest,
  SessionCheck,
  SessionDiff,
  SessionMerge,
  WorktreeApi,
} from './worktree-types.js';
import type {
  CreateSessionRequest,
  EffectiveSettings,
  ForkSessionRequest,
  ImportSessionRequest,
  ImportSessionResult,
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

/**
 * The in-process orchestrator: a thin coordinator over its state (an OrchestratorContext). It
 * owns the state, turn start-up (`#pump`), waiting and shutdown; accepting turns and request
 * keys live in acceptance.ts, cancelling in cancellation.ts, the slot table in
 * orchestrator-context.ts and the read side in session-queries.ts.
 */

/** The in-process orchestrator: the API plus `shutdown`. */
export interface Orchestrator extends OrchestratorApi, WorktreeApi {
  /** Deletes an idle session: record, event log, session HOME (`session_busy` while a turn is live or queued). */
  removeSession(sessionId: string): Promise<{ sessionId: string; freedBytes: number }>;
  /**
   * A fleet worker's createSession: the session gets `sessionId`, which its client assigned when
   * it queued the request (`s-` and 10 hex digits; `usage` for another form or an id in use).
   */
  createSessionWithId(request: CreateSessionRequest, sessionId: string): Promise<TurnHandle>;
  /** Refuses new turns, cancels every queued and live turn, and resolves once every child is gone (warm agents too). */
  shutdown(): Promise<void>;
  /**
   * Closes every warm agent with `reason` (each close recorded as its session's `session.closed`),
   * e.g. `config_changed` when the host's configuration changed; resolves once they are gone.
   * Live turns and their agents are not touched.
   */
  drainWarmAgents(reason: WarmCloseReason): Promise<void>;
  /** Sessions whose agent is warm now, least recently used first. */
  warmSessions(): string[];
  /** The agents prewarmed now (`orchestrator.prewarm`): the session id each is held for, its pid and state. */
  prewarmedAgents(): Array<{ sessionId: string; pid: number | undefined; state: string }>;
  /**
   * Starts the agent of a new session a client is about to create (see SessionIntent), staged as
   * an early start is (nothing stored): only for a workspace approved under this orchestrator's
   * config, without a worktree, when its turn would start at once and no agents are prewarmed.
   * Resolves the intent's id (its agent's session id), or why none was started. The agent is
   * taken by a createSession given this id whose request matches the intent (`matchesIntent`);
   * any other createSession given the id, `dropIntent`, a shutdown, a config change or
   * `INTENT_WINDOW_MS` passing discards it (stopped, its session directory removed).
   */
  startIntent(intent: SessionIntent): Promise<IntentStart>;
  /** createSession, taking the agent started for `intentId` when the request matches its intent (else that agent is discarded). */
  createSession(request: CreateSessionRequest, options?: { intentId?: string | undefined }): Promise<TurnHandle>;
  /** Discards the agent of an intent no createSession took (its client went away); `reason` goes to the log. */
  dropIntent(intentId: string, reason: string): Promise<void>;
}

/** The answer to `startIntent`: the intent's id when its agent is starting, else why not. */
export type IntentStart = { intentId: string; reason?: undefined } | { intentId?: undefined; reason: string };

// An agent started for an intent, until a createSession takes it or it is discarded.
interface HeldIntent {
  early: EarlyAgent;
  facts: IntentFacts;
  timer: NodeJS.Timeout;
}

/** A fork from the source's native checkpoint (see NativeForker). */
interface NativeForkSeed {
  /** The first turn's prompt when a checkpoint was found: the user's prompt alone. */
  prompt: string;
  /** Copies the checkpoint into the new session's directory (`targetDir`). */
  prepare(targetDir: string): Promise<{ nativeSessionId: string; runId: string } | undefined>;
}

/**
 * Starts an orchestrator over `deps.store`: first recovers what a dead owner left (queued runs
 * become `cancelled`/`queue_lost`, running ones `unknown`, see `recoverSessions`), then
 * loads the durable request keys (`<state>/request-keys.json`). The caller owns the state
 * directory (`store.acquireOwner`) before calling this and calls `shutdown()` before releasing it.
 * Throws `internal` for invalid limits and `state_corrupt` for a malformed request-key file.
 */
export async function createOrchestrator(deps: OrchestratorDeps): Promise<Orchestrator> {
  return startOrchestrator(deps).orchestrator;
}

/** An orchestrator being started by {@link startOrchestrator}. */
export interface OrchestratorStart {
  /** The orchestrator, once recovery and the request keys are done; rejects as `createOrchestrator` does. */
  orchestrator: Promise<Orchestrator>;
  /** What `startIntent` made of the intent given (never rejects); undefined without one. */
  intent: Promise<IntentStart> | undefined;
  /**
   * The malformed records recovery skipped (left alone), from its one scan of the records, so
   * that the caller names them without reading every record again. Never rejects: undefined when
   * recovery did not finish (`orchestrator` then rejects).
   */
  malformed: Promise<CorruptSession[] | undefined>;
  /**
   * Settles (never rejects) once the intent's agent has spawned or none will, or INTENT_HEAD_START_MS
   * after the start, whichever is first; at once without an intent. Recovery waits for it, and so
   * may the caller's own start-up work (serve-main.ts: the socket, the identity digests).
   */
  headStart: Promise<void>;
}

/**
 * `createOrchestrator`, with the agent of `intent` (what the `run` that started this server is
 * about to create) started first, so that its spawn and handshake overlap recovery and the
 * request keys. Recovery leaves that agent alone: it touches only records with open runs (and
 * their agents, found by HOME), and the intent's session has no record before its createSession,
 * which waits for `orchestrator`. When the start fails, the intent's agent is discarded before
 * `orchestrator` rejects.
 */
export function startOrchestrator(deps: OrchestratorDeps, intent?: SessionIntent): OrchestratorStart {
  const limits = OrchestratorLimitsSchema.safeParse(deps.limits);
  if (!limits.success) {
    const invalid = new OneWorksError(ERROR_CODES.INTERNAL, `invalid orchestrator limits: ${z.prettifyError(limits.error)}`);
    return {
      orchestrator: Promise.reject(invalid),
      intent: undefined,
      malformed: Promise.resolve(undefined),
      headStart: Promise.resolve(),
    };
  }
  const modelsFor = deps.modelsFor && boundedModelsFor(deps.modelsFor.bind(deps), deps.catalogDeadlineMs ?? CATALOG_DEADLINE_MS);
  const instance = new InProcessOrchestrator({ ...deps, limits: limits.data, ...(modelsFor ? { modelsFor } : {}) });
  const ahead = intent ? instance.startIntentAhead(intent, true) : undefined;
  const started = ahead?.then(
    (a) => a.start,
    (error: unknown): IntentStart => ({ reason: error instanceof Error ? error.message : String(error) }),
  );
  const spawned = headStart(ahead, deps.intentHeadStartMs ?? INTENT_HEAD_START_MS);
  let recovered: (corrupt: CorruptSession[] | undefined) => void = () => undefined;
  const malformed = new Promise<CorruptSession[] | undefined>((resolve) => {
    recovered = resolve;
  });
  const orchestrator = (async (): Promise<Orchestrator> => {
    try {
      // Recovery (a scan and a parse of every session record) yields to the intent's agent until it
      // has spawned: on one event loop, the scan would otherwise run between the intent's steps.
      await spawned;
      const recovery = await recoverSessions(deps.store, {
        stateDir: deps.stateDir,
        ...(deps.recoveryScope ? { only: deps.recoveryScope } : {}),
      });
      recovered(recovery.corrupt);
      const keys = await RequestKeyRegistry.open(requestKeyFile(deps.stateDir), StoredHandleSchema, PendingTurnSchema);
      // A key reserved by a dead owner: its handle when the turn was recorded, else unclaimed.
      await keys.settlePending((pending) => settledHandle(deps.store, pending));
      instance.adoptKeys(keys);
      return instance;
    } catch (error) {
      recovered(undefined);
      // The intent's agent goes with the failed start: shutdown discards it, or its start, seeing the shutdown, does.
      await Promise.all([instance.shutdown(), started]).catch(() => undefined);
      throw error;
    }
  })();
  return { orchestrator, intent: started, malformed, headStart: spawned };
}

/**
 * The longest recovery waits for the agent of the intent a server was started with to spawn (see
 * startOrchestrator), in ms: a spawn takes tens of ms, but an agent whose CLI is still to be
 * installed takes as long as the download, which the dead owner's sessions need not wait for.
 */
export const INTENT_HEAD_START_MS = 1000;

// Resolves once the intent's agent has spawned (or none will), or after `ms`, whichever is first.
async function headStart(ahead: Promise<{ spawned: Promise<unknown> }> | undefined, ms: number): Promise<void> {
  if (!ahead) return;
  let timer: NodeJS.Timeout | undefined;
  const bound = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  try {
    await Promise.race([ahead.then((a) => a.spawned).catch(() => undefined), bound]);
  } finally {
    clearTimeout(timer);
  }
}

class InProcessOrchestrator implements Orchestrator {
  readonly #deps: OrchestratorDeps;
  readonly #admission: Admission;
  readonly #slots = new Map<string, SessionSlot>();
  readonly #ctx: OrchestratorContext;
  readonly #runnerStore: RunnerStore;
  readonly #signal = new ChangeSignal();
  readonly #warm: WarmAgents;
  readonly #prewarm: PrewarmPool;
  /** What the most recent new session that a prewarmed agent could have served ran with. */
  #prewarmTarget: PrewarmTarget | undefined;
  /** Agents started for intents (startIntent) no createSession took yet, by intent id. */
  readonly #intents = new Map<string, HeldIntent>();
  /** Discards of intents' agents under way (awaited by shutdown). */
  readonly #discarding = new Set<Promise<void>>();
  #closing = false;

  /** The request keys, loaded after recovery (adoptKeys): no request that uses them comes before. */
  #keys: RequestKeyRegistry<StoredHandle, PendingTurn> | undefined;

  constructor(deps: OrchestratorDeps) {
    this.#deps = deps;
    const { maxConcurrentRuns, maxQueuedTotal, maxQueuedPerSession } = deps.limits;
    this.#admission = createAdmission({ maxConcurrentRuns, maxQueuedTotal, maxQueuedPerSession });
    this.#warm = createWarmAgents(deps.limits, deps.measureRss);
    const redactor = new Redactor();
    for (const secret of deps.secrets ?? []) redactor.register(secret);
    const keysOf = (): RequestKeyRegistry<StoredHandle, PendingTurn> => {
      if (!this.#keys) throw new OneWorksError(ERROR_CODES.INTERNAL, 'the request keys are used before they were loaded');
      return this.#keys;
    };
    this.#ctx = {
      deps,
      get keys() {
        return keysOf();
      },
      admission: this.#admission,
      redactor,
      slots: this.#slots,
      loading: new Map(),
      reserved: (id) => this.#prewarm.has(id),
      changed: () => this.#signal.changed(),
      pump: () => this.#pump(),
    };
    this.#runnerStore = new RunnerStore(
      deps.store,
      (sessionId) => {
        const slot = this.#slots.get(sessionId);
        return slot ? { book: slot.book, base: slot.runnerBase } : undefined;
      },
      (sessionId) => this.#prewarm.staged(sessionId),
    );
    this.#prewarm = new PrewarmPool({
      count: deps.limits.prewarm ?? 0,
      windowMs: deps.limits.keepWarmMs ?? 0,
      stateDir: deps.stateDir,
      newId: () => newSessionId(this.#ctx),
      open: (target, staged) =>
        openSessionRunner(deps, this.#runnerStore, staged.record, target.presentation, async (cliVersion) => {
          staged.record = { ...staged.record, cliVersion };
        }),
      log: deps.log,
    });
  }

  /** The request keys, once recovery is done (startOrchestrator): the orchestrator is handed out only after this. */
  adoptKeys(keys: RequestKeyRegistry<StoredHandle, PendingTurn>): void {
    this.#keys = keys;
  }

  async createSession(request: CreateSessionRequest, options: { intentId?: string | undefined } = {}): Promise<TurnHandle> {
    // Out of the table at once: neither its window nor a drop discards it while this request decides.
    const intent = options.intentId === undefined ? undefined : this.#takeIntent(options.intentId);
    if (!intent) return this.#createSession(request, undefined);
    const taken = { done: false };
    try {
      return await this.#createSession(request, undefined, undefined, { ...intent, taken });
    } finally {
      // Refused before it was decided (a check, a replayed request key): discarded like a mismatch.
      if (!taken.done) await this.#discardIntent(intent.early, 'its session was not created');
    }
  }

  async startIntent(intent: SessionIntent): Promise<IntentStart> {
    return (await this.startIntentAhead(intent)).start;
  }

  /**
   * `startIntent`, with what startOrchestrator waits for before recovery: `spawned` settles once the
   * intent's agent has been opened (its child spawned) or could not be, and at once when none starts.
   */
  async startIntentAhead(intent: SessionIntent, launchedAhead = false): Promise<{ start: IntentStart; spawned: Promise<unknown> }> {
    const start = await this.#startIntent(intent, launchedAhead);
    const spawned = start.intentId === undefined ? undefined : this.#intents.get(start.intentId)?.early.opened;
    return { start, spawned: spawned ?? Promise.resolve() };
  }

  // `launchedAhead`: the intent a server was started with, whose agent cli/bin.cjs may have launched
  // before the orchestrator loaded (core/session/launch-ahead.ts): its session id is this one's.
  async #startIntent(intent: SessionIntent, launchedAhead = false): Promise<IntentStart> {
    if (this.#closing) return { reason: 'the orchestrator is shutting down' };
    if (this.#prewarm.enabled) return { reason: 'agents are prewarmed (orchestrator.prewarm)' };
    const adapter = intent.adapter ?? this.#deps.defaultAdapter;
    if (adapter === undefined) return { reason: 'no adapter named and no default adapter' };
    let facts: IntentFacts;
    let defaults: AdapterDefaults;
    try {
      defaults = this.#deps.defaultsFor(adapter);
      // Approved under this orchestrator's config: an unapproved workspace never gets an agent.
      const approved = await approveWorkspace(this.#deps, intent.workspace, undefined);
      if (approved.worktree) return { reason: 'its sessions run in worktrees' };
      const { labels } = checkMetadata(intent);
      const { presentation, title, model, effort, autonomy } = intent;
      facts = { adapter, workspace: approved.workspace, model, effort, autonomy, title, labels, presentation };
    } catch (error) {
      return { reason: error instanceof Error ? error.message : String(error) };
    }
    const request: CreateSessionRequest = {
      adapter,
      workspace: facts.workspace,
      prompt: '',
      ...(facts.model ? { model: facts.model } : {}),
      ...(facts.effort ? { effort: facts.effort } : {}),
      ...(intent.autonomy ? { autonomy: intent.autonomy } : {}),
      ...(facts.title ? { title: facts.title } : {}),
    };
    const labels = facts.labels ? [...facts.labels] : undefined;
    const early = await this.#startEarly(request, defaults, facts.workspace, labels, facts.presentation, launchedAhead);
    if (!early) return { reason: 'its agent cannot start ahead now' };
    const windowMs = this.#deps.intentWindowMs ?? INTENT_WINDOW_MS;
    const timer = setTimeout(() => void this.dropIntent(early.id, `not used within ${windowMs} ms`), windowMs);
    timer.unref();
    this.#intents.set(early.id, { early, facts, timer });
    this.#deps.log?.(`intent: the agent of session ${early.id} (${adapter}) is starting in ${facts.workspace} before its createSession`);
    // Shut down meanwhile: shutdown discarded the intents it saw, this one too.
    if (this.#closing) await this.dropIntent(early.id, 'the orchestrator is shutting down');
    return { intentId: early.id };
  }

  async dropIntent(intentId: string, reason: string): Promise<void> {
    const intent = this.#takeIntent(intentId);
    if (intent) await this.#discardIntent(intent.early, reason);
  }

  #takeIntent(intentId: string): HeldIntent | undefined {
    const intent = this.#intents.get(intentId);
    if (!intent) return undefined;
    this.#intents.delete(intentId);
    clearTimeout(intent.timer);
    return intent;
  }

  // Stops an intent's agent and removes its session directory; tracked until done (shutdown waits for it).
  #discardIntent(early: EarlyAgent, reason: string): Promise<void> {
    this.#deps.log?.(`intent: the agent of session ${early.id} is discarded: ${reason}`);
    const work = this.#prewarm.discard(early.id, early.opened).finally(() => this.#discarding.delete(work));
    this.#discarding.add(work);
    return work;
  }

  async createSessionWithId(request: CreateSessionRequest, sessionId: string): Promise<TurnHandle> {
    if (!ASSIGNED_SESSION_ID.test(sessionId)) {
      throw new OneWorksError(ERROR_CODES.USAGE, `a new session's id must be s- and 10 hex digits, not ${JSON.stringify(sessionId)}`, {
        data: { sessionId },
      });
    }
    return this.#createSession(request, undefined, sessionId);
  }

  // `native`: a fork from the source's native checkpoint. `prepare` copies it into the new
  // session's directory before its first turn; when it finds none, the request's transcript
  // prompt is used, else `native.prompt` (the native state carries the history).
  // `intent`: the agent started for this request's intent, taken (`taken.done`) when the request matches it.
  async #createSession(
    request: CreateSessionRequest,
    native: NativeForkSeed | undefined,
    assignedId?: string,
    intent?: HeldIntent & { taken: { done: boolean } },
  ): Promise<TurnHandle> {
    this.#assertOpen();
    checkPrompt(request.prompt);
    const defaults = this.#deps.defaultsFor(request.adapter);
    const approved = await approveWorkspace(this.#deps, request.workspace, request.worktree);
    const { workspace } = approved;
    const { labels } = checkMetadata(request);
    const { requestKey, presentation, ...args } = request;
    return withRequestKey(this.#ctx, requestKey, { op: 'create', ...args, workspace }, async (reserve) => {
      const fromIntent = intent && !approved.worktree && this.#matchesIntent(intent, request, workspace, labels) ? intent : undefined;
      if (intent) {
        intent.taken.done = true;
        if (fromIntent) this.#deps.log?.(`intent: session ${intent.early.id} takes the agent started for its intent`);
        // Not awaited: this request goes on with an agent of its own meanwhile.
        else void this.#discardIntent(intent.early, 'its createSession asked for something else');
      }
      const early =
        fromIntent?.early ??
        (approved.worktree || native || assignedId
          ? undefined
          : await this.#startEarly(request, defaults, workspace, labels, presentation));
      // Until the session's slot is in the table, the early agent is the pool's: a refusal discards it.
      let joined = false;
      try {
        return await this.#acceptNew(request, native, assignedId, {
          approved,
          labels,
          reserve,
          defaults,
          early,
          joined: () => {
            joined = true;
          },
        });
      } catch (error) {
        if (early && !joined) await this.#prewarm.discard(early.id, early.opened);
        throw error;
      }
    });
  }

  // The body of createSession once its request key is claimed: settings checked against the
  // catalog, the session id (an early agent's, a prewarmed agent's or a new one), its record and
  // slot, and its first turn accepted. `joined` is called once the slot is in the table (from
  // then on the agent is the session's).
  async #acceptNew(
    request: CreateSessionRequest,
    native: NativeForkSeed | undefined,
    assignedId: string | undefined,
    x: {
      approved: Awaited<ReturnType<typeof approveWorkspace>>;
      labels: string[] | undefined;
      reserve: Reserve | undefined;
      defaults: AdapterDefaults;
      early: EarlyAgent | undefined;
      joined: () => void;
    },
  ): Promise<TurnHandle> {
    const { approved, labels, reserve, early } = x;
    const { workspace } = approved;
    const { presentation } = request;
    const { defaults } = x;
    let notes: string[] = [];
    const settings = await withCatalog(
      this.#deps,
      request.adapter,
      () => chosenModel(request, defaults),
      (models) => {
        const resolved = resolveCreateSettings(request, defaults, models);
        notes = launchNotes(request, resolved, models, defaults);
        return resolved;
      },
      (note) => notes.push(note),
    );
    // A prewarmed agent serves a session without worktree, title or labels (droid takes the
    // last two at creation only); the next such session here is prewarmed for.
    const target =
      early || approved.worktree || request.title || labels?.length || native || assignedId
        ? undefined
        : { adapter: request.adapter, workspace, settings, presentation };
    if (target && this.#prewarm.enabled) this.#prewarmTarget = target;
    const prewarmed = target ? await this.#prewarm.claim(target) : undefined;
    const id = early?.id ?? prewarmed?.id ?? (assignedId === undefined ? await newSessionId(this.#ctx) : await this.#unusedId(assignedId));
    const made = approved.worktree ? await makeWorktree(this.#deps, id, approved, approved.worktree) : undefined;
    const forked = native ? await native.prepare(sessionDir(this.#deps.stateDir, id)) : undefined;
    const fresh = newSessionRecord(id, made?.workspace ?? workspace, { ...request, labels }, settings);
    // The early agent's runner once opened (undefined: none after all, e.g. the adapter cannot start ahead).
    const earlyRunner = early ? await early.opened : undefined;
    if (early && !earlyRunner) await this.#prewarm.discard(early.id);
    const agent = prewarmed ?? (earlyRunner && early ? { runner: earlyRunner, record: early.staged.record } : undefined);
    const record = agent
      ? { ...fresh, ...startFacts(agent.record) }
      : forked && fresh.forkedFrom
        ? { ...fresh, nativeSessionId: forked.nativeSessionId, forkedFrom: { ...fresh.forkedFrom, checkpointRun: forked.runId } }
        : fresh;
    const slot = new SessionSlot(newBook(this.#ctx, made ? { ...record, worktree: made.worktree } : record, 0));
    if (agent) {
      // The agent runs (or is starting) already: the session's first turn goes to it.
      await agent.runner.adopt(slot.book.runnerView(0));
      slot.attach(agent.runner);
      slot.startedForFirstTurn = agent !== prewarmed;
    }
    const prompt = forked && native ? native.prompt : request.prompt;
    const accepted = acceptTurn(this.#ctx, slot, prompt, settings, { interrupt: false, notes, reserve, presentation });
    // The slot is in the table now (acceptTurn's first step) unless it refused at once: the
    // agent's writes go to its book, with what it staged until now.
    const joined = this.#slots.get(id) === slot;
    if (agent && joined) {
      x.joined();
      this.#handOver(slot, this.#prewarm.handOver(id));
    }
    try {
      return await accepted;
    } catch (error) {
      if (agent && joined) await slot.closeRunner('not_accepted').catch(() => undefined);
      else if (prewarmed) await this.#prewarm.discard(id);
      if (made) await undoWorktree(this.#deps, made.worktree);
      throw error;
    }
  }

  // What an agent staged before its session's slot joined the table: its events go to the
  // book, and a native session id it recorded meanwhile (its runner also keeps it) too.
  #handOver(slot: SessionSlot, staged: StagedSession | undefined): void {
    if (!staged) return;
    void slot.book.appendFromRunner(staged.events).catch(() => undefined);
    const nativeSessionId = staged.record.nativeSessionId;
    if (nativeSessionId !== undefined && slot.book.record.nativeSessionId === undefined) {
      void slot.book.update((current) => ({ ...current, nativeSessionId })).catch(() => undefined);
    }
  }

  /**
   * An agent started for a new session as it is created (an early start), when its turn would
   * start at once: its spawn and handshake then overlap the catalog check, the record writes and
   * the turn's start, which otherwise all come first. Started with the settings the request
   * names before the catalog is read; the turn applies the checked ones. Not with prewarming on
   * (a prewarmed agent may serve the session), nor while shutting down.
   */
  async #startEarly(
    request: CreateSessionRequest,
    defaults: AdapterDefaults,
    workspace: string,
    labels: string[] | undefined,
    presentation: PresentationEnv | undefined,
    launchedAhead = false,
  ): Promise<EarlyAgent | undefined> {
    if (this.#prewarm.enabled || this.#closing) return undefined;
    let settings: EffectiveSettings;
    try {
      const named = resolveCreateSettings(request, defaults, undefined);
      // An effort of a model the catalog checks may be dropped by the check (a model without
      // effort levels), which an agent could not undo: started without one, it gets the checked
      // one with its turn.
      const { effort: _unchecked, ...rest } = named;
      settings = needsCatalog(named.model) ? rest : named;
    } catch {
      return undefined;
    }
    const id = (launchedAhead ? claimLaunchedAhead() : undefined) ?? (await newSessionId(this.#ctx));
    const turn = { turnId: `${id}/r1`, sessionId: id, workspace, writer: isWriter(settings.autonomy) };
    if (this.#closing || !this.#admission.wouldStartNow(turn)) return undefined;
    const record = newSessionRecord(id, workspace, { ...request, labels }, settings);
    return this.#prewarm.startEarly({ adapter: request.adapter, workspace, settings, presentation }, record);
  }

  // Whether the agent started for `intent` may serve `request` (workspace and labels as the orchestrator checked them).
  #matchesIntent(intent: HeldIntent, request: CreateSessionRequest, workspace: string, labels: string[] | undefined): boolean {
    const { adapter, model, effort, autonomy, title, presentation } = request;
    return matchesIntent(intent.facts, { adapter, workspace, model, effort, autonomy, title, labels, presentation });
  }

  async sendMessage(request: SendMessageRequest): Promise<TurnHandle> {
    this.#assertOpen();
    checkPrompt(request.prompt);
    const slot = await this.#slot(request.sessionId);
    // An imported session's workspace was recorded by the agent CLI, not approved by One Works.
    if (slot.book.record.imported) await checkApproved(slot.book.record.workspace, this.#deps.approvedRoots, this.#deps.approvalSource);
    const { requestKey, presentation, ...args } = request;
    return withRequestKey(this.#ctx, requestKey, { op: 'send', ...args }, async (reserve) => {
      const adapter = slot.book.record.adapter;
      const previous = (): EffectiveSettings => lastAcceptedSettings(slot.book.record, () => this.#deps.defaultsFor(adapter));
      assertKnownOutcome(slot.book.record);
      assertWorktreePresent(slot.book.record);
      let notes: string[] = [];
      const settings = await withCatalog(
        this.#deps,
        adapter,
        () => chosenModel(request, previous()),
        (models) => {
          assertKnownOutcome(slot.book.record);
          const resolved = resolveSendSettings(request, previous(), models);
          notes = launchNotes(request, resolved, models);
          return resolved;
        },
        (note) => notes.push(note),
      );
      // `send --allow/--deny` join the session's policy for this turn and every later one.
      if (request.policy) await slot.book.update((record) => ({ ...record, policy: mergePolicies(record.policy, request.policy) }));
      // An agent that can be steered takes the message into its live turn (Codex: turn/steer).
      const steered = request.interrupt === true ? await steerLiveTurn(this.#ctx, slot, request.prompt, settings) : undefined;
      if (steered) return steered;
      // The session's warm agent is asked whether it still answers while the turn is recorded,
      // instead of after (the turn waits for the answer before it is given to the agent).
      if (this.#warm.isWarm(slot.id)) slot.checkReadyAhead(READY_TIMEOUT_MS);
      return acceptTurn(this.#ctx, slot, request.prompt, settings, {
        interrupt: request.interrupt === true,
        notes,
        reserve,
        presentation,
      });
    });
  }

  async forkSession(request: ForkSessionRequest): Promise<TurnHandle> {
    this.#assertOpen();
    const { record } = (await this.#slot(request.sessionId)).book;
    const events = await this.#deps.store.readEvents(record.id);
    const seed = buildForkSeed(record.id, events, new Set(record.runs.map((run) => run.id)), request.runId, request.prompt);
    if (request.runId !== undefined && !seed.runs.includes(request.runId)) {
      throw new OneWorksError(
        ERROR_CODES.USAGE,
        `session ${record.id} has no run ${request.runId} to fork from (runs: ${seed.runs.join(', ') || 'none'})`,
        {
          data: { sessionId: record.id, runId: request.runId },
        },
      );
    }
    const title = request.title ?? (record.title ? `fork of ${record.title}` : undefined);
    // An adapter that checkpoints its native state forks from the source's checkpoint (a copy).
    const forker = record.nativeSessionId ? await this.#deps.forkerFor?.(record.adapter) : undefined;
    const sourceNativeId = record.nativeSessionId;
    const runIds = record.runs.map((run) => run.id);
    const upTo = request.runId === undefined ? runIds.length : runIds.indexOf(request.runId) + 1;
    const native: NativeForkSeed | undefined =
      forker && sourceNativeId
        ? {
            prompt: request.prompt.trim() === '' ? 'Continue from here.' : request.prompt,
            prepare: (targetDir) =>
              forker.fork({
                sourceDir: sessionDir(this.#deps.stateDir, record.id),
                sourceNativeId,
                runs: runIds.slice(0, upTo),
                targetDir,
              }),
          }
        : undefined;
    return this.#createSession(
      {
        adapter: record.adapter,
        workspace: record.workspace,
        prompt: this.#ctx.redactor.redact(seed.text),
        model: request.model,
        effort: request.effort,
        autonomy: request.autonomy,
        requestKey: request.requestKey,
        ...(title ? { title } : {}),
        ...(record.labels?.length ? { labels: record.labels } : {}),
        ...(record.policy ? { policy: record.policy } : {}),
        forkOf: { sessionId: record.id, ...(request.runId ? { runId: request.runId } : {}) },
        // A fork runs where its source ran; no worktree is made for it, whatever the root's isolation.
        worktree: false,
      },
      native,
    );
  }

  async cancel(sessionId: string, runId?: string): Promise<SessionSummary> {
    const slot = await this.#slot(sessionId);
    await cancelTurns(this.#admission, slot, sessionId, runId);
    return this.#summary(slot);
  }

  async status(sessionId: string): Promise<SessionSummary> {
    return this.#summary(await this.#slot(sessionId));
  }

  async list(): Promise<SessionSummary[]> {
    return listSummaries(this.#ctx);
  }

  async corruptSessions(): Promise<CorruptSession[]> {
    return (await this.#deps.store.scanSessions()).corrupt;
  }

  async reconcileRun(request: ReconcileRequest): Promise<SessionSummary> {
    const slot = await this.#slot(request.sessionId);
    if (slot.turns.has(request.runId)) {
      throw new OneWorksError(ERROR_CODES.USAGE, `run ${request.runId} of session ${request.sessionId} is still queued or running`, {
        data: { ...request },
      });
    }
    const { record, event } = reconcileRecord(slot.book.record, request);
    await slot.book.update(() => record);
    slot.book.emit(event);
    await slot.book.flush();
    return this.#summary(slot);
  }

  async wait(sessionIds: string[], timeoutMs: number): Promise<WaitResult> {
    const slots = await Promise.all(sessionIds.map((id) => this.#slot(id)));
    const timedOut = !(await this.#signal.until(() => slots.every((slot) => slot.turns.size === 0), timeoutMs));
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
    await this.#signal.until(() => isTerminal(run()!.status) && !slot.turns.has(runId), Infinity);
    return outcomeOfRun(run()!);
  }

  subscribe(sessionId: string, listener: (event: RuntimeEvent) => void): () => void {
    return subscribeSlot(this.#ctx, sessionId, listener);
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

  /**
   * Deletes a session that has no live or queued turn (`session_busy` otherwise): its agent
   * child is stopped, then its record, event log and session HOME are removed. Resolves with
   * the bytes freed.
   */
  async removeSession(sessionId: string): Promise<{ sessionId: string; freedBytes: number }> {
    this.#assertOpen();
    const slot = await this.#slot(sessionId);
    const busy = (): void => {
      if (slot.turns.size === 0) return;
      throw new OneWorksError(
        ERROR_CODES.SESSION_BUSY,
        `session ${sessionId} has a live or queued turn; cancel it (\`one-works cancel ${sessionId}\`) or wait for it, then remove it`,
        { data: { sessionId } },
      );
    };
    busy();
    if (!this.#deps.store.removeSession) throw new OneWorksError(ERROR_CODES.INTERNAL, 'this store cannot delete sessions');
    await slot.closeRunner('removed');
    await slot.book.flush();
    busy();
    this.#slots.delete(sessionId);
    const freedBytes = await this.#deps.store.removeSession(sessionId);
    this.#signal.changed();
    return { sessionId, freedBytes };
  }

  async listAsks(sessionId?: string): Promise<OpenAsk[]> {
    if (sessionId !== undefined) await this.#slot(sessionId);
    return this.#deps.asks?.list(sessionId) ?? [];
  }

  async answerAsk(answer: AskAnswer): Promise<AnsweredAsk> {
    if (!this.#deps.asks) {
      throw new OneWorksError(ERROR_CODES.ASK_NOT_FOUND, `no open ask ${answer.askId}: this orchestrator keeps no asks open`);
    }
    return this.#deps.asks.answer(answer);
  }

  async resolveAttention(sessionId: string, note?: string): Promise<SessionSummary> {
    const slot = await this.#slot(sessionId);
    const { status, attention = [] } = slot.book.record;
    if (status !== 'needs_attention') {
      throw new OneWorksError(ERROR_CODES.USAGE, `session ${sessionId} does not need attention (it is ${status}); nothing to resolve`, {
        data: { sessionId, status },
      });
    }
    await slot.book.update((record) => {
      const { attention: _cleared, ...rest } = record;
      return { ...rest, status: 'idle' };
    });
    slot.book.emit({
      type: 'attention.resolved',
      key: `attention:resolved:${randomBytes(6).toString('hex')}`,
      by: 'human',
      cleared: attention,
      ...(note ? { note } : {}),
    });
    await slot.book.flush();
    return this.#summary(slot);
  }

  async readSession(request: ReadSessionRequest): Promise<SessionDetail> {
    return readSessionDetail(this.#ctx, request);
  }

  async usage(sessionIds?: string[]): Promise<UsageReport> {
    return sessionUsage(this.#ctx, sessionIds);
  }

  async info(): Promise<OrchestratorInfo> {
    return orchestratorInfo(this.#deps, this.activity());
  }

  async models(adapter: string): Promise<CatalogModel[]> {
    return catalogModels(this.#deps, adapter);
  }

  async importSession(request: ImportSessionRequest): Promise<ImportSessionResult> {
    this.#assertOpen();
    return importSession(this.#ctx, request);
  }

  async diffSession(request: DiffSessionRequest): Promise<SessionDiff> {
    return diffSession(this.#ctx, await this.#slot(request.sessionId), request.stat === true);
  }

  async mergeSession(request: MergeSessionRequest): Promise<SessionMerge> {
    return mergeSession(this.#ctx, await this.#slot(request.sessionId), request);
  }

  async discardSession(request: { sessionId: string }): Promise<SessionSummary> {
    const slot = await this.#slot(request.sessionId);
    await discardSession(this.#ctx, slot);
    return this.#summary(slot);
  }

  async checkSession(request: CheckSessionRequest): Promise<SessionCheck> {
    return checkSession(this.#ctx, await this.#slot(request.sessionId), request);
  }

  async shutdown(): Promise<void> {
    this.#closing = true;
    await this.#dropIntents('the orchestrator is shutting down');
    await this.#prewarm.drain('shutdown', { stop: true });
    const slots = [...this.#slots.values()];
    await Promise.all(slots.map((slot) => this.cancel(slot.id)));
    await this.#warm.drain('shutdown');
    await Promise.all(slots.map((slot) => slot.closeRunner('shutdown')));
    // Turns that were live end now that their agents are gone; what they close goes through the pool.
    await Promise.all(slots.flatMap((slot) => [...slot.turns.values()].map((turn) => turn.done)));
    await this.#warm.drain('shutdown');
    // A record that still cannot be written keeps its last good state on disk; the next
    // start takes the outcome from the event log when the log has it (recoverInterruptedRuns).
    await Promise.all(slots.map((slot) => slot.book.flush().catch(() => undefined)));
  }

  async drainWarmAgents(reason: WarmCloseReason): Promise<void> {
    // Agents prewarmed with a configuration that changed would serve it still: none from now on.
    const stale = reason === 'config_changed' || reason === 'shutdown';
    await Promise.all([
      this.#warm.drain(reason),
      this.#prewarm.drain(stale ? reason : 'replaced', { stop: stale }),
      stale ? this.#dropIntents(`closed: ${reason}`) : undefined,
    ]);
  }

  // Discards every intent's agent no createSession took, and waits for the discards under way.
  async #dropIntents(reason: string): Promise<void> {
    await Promise.all([...this.#intents.keys()].map((id) => this.dropIntent(id, reason)));
    await Promise.all([...this.#discarding]);
  }

  warmSessions(): string[] {
    return this.#warm.sessions();
  }

  prewarmedAgents(): Array<{ sessionId: string; pid: number | undefined; state: string }> {
    return this.#prewarm.list();
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
        warm: this.#warm,
        closing: () => this.#closing,
        cancelQueued: (requests, reason) => cancelQueued(slot, requests, reason),
      }).finally(() => {
        this.#signal.changed();
        this.#pump();
        // After a turn, not during its start: the agents are prewarmed for the next new session.
        if (this.#prewarmTarget && !this.#closing) this.#prewarm.want(this.#prewarmTarget);
      });
    }
    this.#signal.changed();
  }

  #summary(slot: SessionSlot): SessionSummary {
    return slotSummary(this.#ctx, slot);
  }

  #slot(sessionId: string): Promise<SessionSlot> {
    return loadSlot(this.#ctx, sessionId);
  }

  // An assigned session id that no slot, stored session or prewarmed agent has.
  async #unusedId(id: string): Promise<string> {
    if (this.#slots.has(id) || this.#prewarm.has(id) || (await this.#deps.store.hasSession(id))) {
      throw new OneWorksError(ERROR_CODES.USAGE, `session ${id} exists already; a new session needs a new id`, { data: { sessionId: id } });
    }
    return id;
  }

  #assertOpen(): void {
    if (this.#closing)
      throw new OneWorksError(
        ERROR_CODES.ORCHESTRATOR_STOPPING,
        'the orchestrator is shutting down and accepts no new turns; retry shortly (the next command starts a new one)',
      );
  }
}

// The form of a session id a fleet client assigns (the orchestrator's own: newSessionId).
const ASSIGNED_SESSION_ID = /^s-[0-9a-f]{10}$/;

// What a prewarmed agent's start recorded that its session's record keeps.
function startFacts(staged: SessionRecord): Partial<SessionRecord> {
  return {
    ...(staged.cliVersion === undefined ? {} : { cliVersion: staged.cliVersion }),
    ...(staged.nativeSessionId === undefined ? {} : { nativeSessionId: staged.nativeSessionId }),
  };
}
