import { randomBytes } from 'node:crypto';
import type { Adapter, AdapterSession, Autonomy, PermissionAsk, PermissionDecision, ResolvedCli, TurnSettings } from '../adapter.js';
import { OneWorksError, isOneWorksError } from '../errors.js';
import type { EventDraft, TurnOutcome } from '../events/index.js';
import { Redactor } from '../redact.js';
import { prepareSessionHome } from '../sandbox/index.js';
import type { RunRecord, SessionRecord, Store } from '../store/index.js';
import { EventSink, type EventListener } from './event-sink.js';
import { execInSandbox, launchInSandbox, type LaunchContext } from './launch.js';
import { worktreeMounts } from '../worktree/git-mounts.js';
import { RENAME_TIMEOUT_MS, renameBounded } from './rename-native.js';

/** Everything a session needs from the runtime, independent of the adapter. */
export interface SessionRuntime {
  store: Store;
  stateDir: string;
  adapter: Adapter<unknown>;
  adapterConfig: unknown;
  cli: ResolvedCli;
  /** Secrets from the configuration, registered before any child starts. */
  secrets: string[];
  decide: (ask: PermissionAsk, session: SessionRecord) => Promise<PermissionDecision>;
  /**
   * Warnings for a turn about to run at `autonomy`: the adapter's declared limitations that the
   * session's policy depends on (see core/permissions `limitationsInEffect`). Each becomes a
   * `log` warn event after `turn.started`. Optional: none when absent.
   */
  limitationNotes?: (session: SessionRecord, autonomy: Autonomy) => string[];
  parentEnv?: NodeJS.ProcessEnv;
  /** Grace between a protocol interrupt and a kill. */
  interruptGraceMs: number;
  /** Per-turn deadline; on expiry the turn is cancelled like a user cancel. */
  runTimeoutMs: number;
  /** Grace of each step when a child is stopped (end of stdin, then SIGTERM), in ms; default core/process's. */
  stopGraceMs?: number;
  /** OS-level confinement of the agent process (config `sandbox`). */
  sandbox?: 'none' | 'bwrap';
  /** Longest wait for a child's stdout to drain after it exited, in ms; default core/process's. */
  drainFallbackMs?: number;
}

export interface NewSessionOptions {
  workspace: string;
  model?: string | undefined;
  effort?: string | undefined;
  autonomy: Autonomy;
  title?: string | undefined;
  /**
   * One Works labels: kept in the record as `labels`, and given to the adapter, which sends
   * them as native session tags when it creates the native session (droid: `initialize_session.tags`).
   */
  tags?: string[] | undefined;
  /** The session's additions to its adapter's permission policy, kept in the record. */
  policy?: SessionRecord['policy'];
}

/**
 * One One Works session in this process: its durable record, its event log, its redactor, and
 * the adapter session that drives the agent. Turns run one at a time; each is recorded before
 * it is submitted and its terminal result is persisted before the child is cleaned up.
 */
export class SessionRunner {
  readonly #rt: SessionRuntime;
  #record: SessionRecord;
  readonly #sink: EventSink;
  readonly #redactor: Redactor;
  #adapterSession: AdapterSession;
  readonly #openAdapterSession: () => AdapterSession;
  /** The start of the agent ahead of the first prompt (startAhead): true once it is up, false when it failed. */
  #ahead: Promise<boolean> | undefined;
  /** Record changes, one after another (see #serially). */
  #updates: Promise<void> = Promise.resolve();
  #closed = false;
  /** Messages steered into live turns by this runner (event keys). */
  #steers = 0;
  // Notes from decisions declined with nobody to decide, recorded when the turn ends.
  #attention: string[] = [];
  // How the adapter said it runs this runner's latest turn (setTurnMode). A new run starts with it,
  // so the adapter's call for an unchanged mode costs no second record write.
  #lastMode: string | undefined;

  private constructor(rt: SessionRuntime, record: SessionRecord, sink: EventSink, redactor: Redactor, home: string) {
    this.#rt = rt;
    this.#record = record;
    this.#sink = sink;
    this.#redactor = redactor;
    // The settings of the turn about to run (pending) win over the previous run's: droid applies them at start.
    const last = record.pending ?? record.runs.at(-1);
    const launchContext = async (): Promise<LaunchContext> => ({
      stateDir: rt.stateDir,
      ...(record.worktree && rt.sandbox === 'bwrap' ? await worktreeMounts(record.worktree) : {}),
      sessionId: record.id,
      redactor,
      parentEnv: rt.parentEnv ?? process.env,
      ...(rt.stopGraceMs === undefined ? {} : { stopGraceMs: rt.stopGraceMs }),
      ...(rt.sandbox === undefined ? {} : { sandbox: rt.sandbox }),
      ...(rt.drainFallbackMs === undefined ? {} : { drainFallbackMs: rt.drainFallbackMs }),
    });
    // Opened once here, and again only after a start ahead of the first turn failed (then the
    // native session id its start may have recorded is loaded, not replaced).
    this.#openAdapterSession = () =>
      rt.adapter.open(
        rt.adapterConfig,
        {
          sessionId: record.id,
          workspace: record.workspace,
          home,
          cli: rt.cli,
          nativeSessionId: this.#record.nativeSessionId,
          model: last?.model,
          effort: last?.effort,
          autonomy: last?.autonomy ?? 'low',
          title: this.#record.title,
          ...(this.#record.labels && this.#record.labels.length > 0 ? { tags: this.#record.labels } : {}),
        },
        {
          emit: (draft: EventDraft) => {
            this.#sink.emit(draft);
          },
          decide: async (ask) => {
            const decision = await this.#rt.decide(ask, this.#record);
            if (decision.attention) this.#attention.push(decision.attention);
            // "Allow for this session" outlives this process: recorded before the agent gets the answer.
            const added = (decision.sessionAllows ?? []).filter((key) => !(this.#record.sessionAllows ?? []).includes(key));
            if (added.length > 0) await this.#update({ sessionAllows: [...(this.#record.sessionAllows ?? []), ...added] });
            return decision;
          },
          launch: async (launch, seed) => launchInSandbox(await launchContext(), launch, seed),
          exec: async (command) => execInSandbox(await launchContext(), command),
          redactor,
          setNativeSessionId: async (nativeSessionId) => {
            await this.#update({ nativeSessionId });
          },
          setTurnMode: (mode) => {
            const run = this.#record.runs.at(-1);
            if (run?.status !== 'running' || mode === this.#lastMode) return Promise.resolve();
            this.#lastMode = mode;
            // Written in turn with the record's other changes, but not before the prompt: the mode
            // describes the run (sessions, the live view, MCP), no recovery reads it, and the
            // turn's end record carries it whatever becomes of this write.
            this.#update({ runs: [...this.#record.runs.slice(0, -1), { ...run, mode }] }).catch(() => undefined);
            return Promise.resolve();
          },
        },
      );
    this.#adapterSession = this.#openAdapterSession();
  }

  /** Creates a new session record and its sandbox home; no child starts yet. */
  static async create(rt: SessionRuntime, options: NewSessionOptions): Promise<SessionRunner> {
    const id = await newSessionId(rt.store);
    const now = new Date().toISOString();
    const record: SessionRecord = {
      id,
      adapter: rt.adapter.name,
      workspace: options.workspace,
      createdAt: now,
      updatedAt: now,
      ...(options.title ? { title: options.title } : {}),
      ...(options.tags && options.tags.length > 0 ? { labels: [...options.tags] } : {}),
      cliVersion: rt.cli.version,
      status: 'idle',
      runs: [],
      pending: { model: options.model, effort: options.effort, autonomy: options.autonomy },
      ...(options.policy ? { policy: options.policy } : {}),
    };
    await rt.store.writeSession(record);
    return SessionRunner.#open(rt, record);
  }

  /** Reopens a recorded session in this process (the adapter resumes the native session). */
  static async resume(rt: SessionRuntime, sessionId: string): Promise<SessionRunner> {
    const record = await rt.store.readSession(sessionId);
    if (record.adapter !== rt.adapter.name) {
      throw new OneWorksError('usage', `session ${sessionId} belongs to adapter ${record.adapter}, not ${rt.adapter.name}`);
    }
    if (record.status === 'needs_attention' && record.runs.at(-1)?.status === 'unknown') {
      throw new OneWorksError(
        'session_unknown_outcome',
        `session ${sessionId}: the outcome of its last turn is unknown; reconcile it first (\`one-works sessions reconcile ${sessionId} RUN --status …\`)`,
      );
    }
    return SessionRunner.#open(rt, record);
  }

  static async #open(rt: SessionRuntime, record: SessionRecord): Promise<SessionRunner> {
    const redactor = new Redactor();
    for (const secret of rt.secrets) redactor.register(secret);
    const home = await prepareSessionHome(rt.stateDir, record.id, []);
    const { keys, lastSeq } = await rt.store.eventIndex(record.id);
    const sink = new EventSink({
      sessionId: record.id,
      target: { append: (events) => rt.store.appendEvents(record.id, events) },
      redactor,
      seenKeys: keys,
      lastSeq,
    });
    return new SessionRunner(rt, record, sink, redactor, home);
  }

  get id(): string {
    return this.#record.id;
  }

  get record(): SessionRecord {
    return this.#record;
  }

  get redactor(): Redactor {
    return this.#redactor;
  }

  /** Live events of this session (assistant deltas included). */
  subscribe(listener: EventListener): () => void {
    return this.#sink.subscribe(listener);
  }

  /**
   * Runs one turn to its end. Settles with the turn's outcome (completed, failed, interrupted or
   * unknown); throws only when the turn could not be recorded at all.
   */
  async runTurn(
    prompt: string,
    overrides: Partial<Pick<RunRecord, 'model' | 'effort' | 'autonomy'>> = {},
    signal?: AbortSignal,
  ): Promise<TurnOutcome> {
    const pending = this.#record.pending ?? this.#record.runs.at(-1);
    const run: RunRecord = {
      id: `r${this.#record.runs.length + 1}`,
      prompt: this.#redactor.redact(prompt),
      // A key present in `overrides` wins even when undefined (the agent's default), else the pending run's.
      model: 'model' in overrides ? overrides.model : pending?.model,
      effort: 'effort' in overrides ? overrides.effort : pending?.effort,
      autonomy: overrides.autonomy ?? pending?.autonomy ?? 'low',
      status: 'running',
      startedAt: new Date().toISOString(),
      // The same adapter session runs this turn as it ran the last one unless it says otherwise (setTurnMode).
      ...(this.#lastMode === undefined ? {} : { mode: this.#lastMode }),
    };
    await this.#update({ runs: [...this.#record.runs, run], status: 'working', pending: undefined });
    this.#sink.emit({
      type: 'turn.started',
      key: `turn:${run.id}:started`,
      runId: run.id,
      model: run.model,
      effort: run.effort,
      autonomy: run.autonomy,
    });
    for (const [index, message] of (this.#rt.limitationNotes?.(this.#record, run.autonomy) ?? []).entries()) {
      this.#sink.emit({ type: 'log', key: `turn:${run.id}:limitation:${index}`, level: 'warn', message: this.#redactor.redact(message) });
    }

    const outcome = await this.#promptWithDeadline(run, prompt, signal);
    const safe: TurnOutcome = { ...outcome, text: this.#redactor.redact(outcome.text) };
    this.#sink.emit({ type: 'turn.completed', key: `turn:${run.id}:completed`, runId: run.id, outcome: safe });
    await this.#sink.flush();
    const ended: RunRecord = {
      ...run,
      // How the adapter said it ran the turn (setTurnMode), even when that write is still under way or failed.
      ...(this.#lastMode === undefined ? {} : { mode: this.#lastMode }),
      status: safe.status,
      reason: safe.reason,
      text: safe.text,
      usage: safe.usage,
      endedAt: new Date().toISOString(),
    };
    await this.#update({
      runs: [...this.#record.runs.slice(0, -1), ended],
      status: safe.status === 'completed' || safe.status === 'interrupted' ? 'idle' : 'needs_attention',
      // A settled turn clears earlier notes; a failed one says why the session needs attention.
      attention:
        safe.status === 'completed' || safe.status === 'interrupted' ? undefined : [`run ${run.id} ${safe.status}: ${safe.reason}`],
    });
    const notes = this.#attention.splice(0);
    if (notes.length > 0) await this.needsAttention(notes);
    return safe;
  }

  async #promptWithDeadline(run: RunRecord, prompt: string, signal: AbortSignal | undefined): Promise<TurnOutcome> {
    let cancelReason: 'timeout' | 'cancelled' | undefined;
    let markEnded!: () => void;
    const ended = new Promise<void>((resolve) => (markEnded = resolve));
    const cancel = (why: 'timeout' | 'cancelled'): void => {
      if (cancelReason) return;
      cancelReason = why;
      void this.#cancelLiveTurn(ended);
    };
    const timer = setTimeout(() => cancel('timeout'), this.#rt.runTimeoutMs);
    const onAbort = (): void => cancel('cancelled');
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await this.#joinStartAhead(run.id, () => cancelReason !== undefined);
      if (cancelReason !== undefined) {
        // Cancelled while its agent was still starting: the prompt never goes out, and the agent
        // is stopped as after an interrupt that was not answered.
        await this.#adapterSession.close();
        const timedOut = cancelReason === 'timeout';
        return {
          status: timedOut ? 'failed' : 'interrupted',
          reason: timedOut ? 'run_timeout' : 'cancelled',
          text: '',
          usage: { reported: false },
        };
      }
      const settings: TurnSettings = { model: run.model, effort: run.effort, autonomy: run.autonomy };
      const outcome = await this.#adapterSession.prompt({ runId: run.id, text: prompt, settings });
      if (cancelReason === 'timeout' && outcome.status !== 'completed') return { ...outcome, status: 'failed', reason: 'run_timeout' };
      if (cancelReason === 'cancelled' && outcome.status !== 'completed')
        return {
          ...outcome,
          status: 'interrupted',
          reason: outcome.reason === 'cancelled' ? 'cancelled' : `cancelled (${outcome.reason})`,
        };
      return outcome;
    } catch (error) {
      const code = isOneWorksError(error) ? error.code : 'internal';
      const message = this.#redactor.redact(error instanceof Error ? error.message : String(error));
      this.#sink.emit({ type: 'error', key: `turn:${run.id}:error`, code, message });
      return { status: 'failed', reason: code, text: '', usage: { reported: false } };
    } finally {
      markEnded();
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  // The first prompt waits for an agent started ahead of it (startAhead). One whose start failed
  // is replaced by a new adapter session, whose prompt starts the agent the usual way (with its
  // degradation steps), unless the turn was cancelled or the runner closed meanwhile.
  async #joinStartAhead(runId: string, cancelled: () => boolean): Promise<void> {
    const ahead = this.#ahead;
    if (!ahead) return;
    this.#ahead = undefined;
    if ((await ahead) || this.#closed || cancelled()) return;
    this.#sink.emit({
      type: 'log',
      key: `turn:${runId}:start-ahead`,
      level: 'warn',
      message: 'the agent started ahead of this turn did not come up; starting it again for the turn',
    });
    this.#adapterSession = this.#openAdapterSession();
  }

  // Protocol interrupt first; if the turn has not ended after the grace period, stop the child.
  // The interrupt's response is only an acknowledgement: a peer can answer it and still never
  // end the turn (e.g. it completed another turn id), so the grace waits for the turn itself.
  async #cancelLiveTurn(ended: Promise<void>): Promise<void> {
    void this.#adapterSession.interrupt().catch(() => undefined);
    const endedInTime = await Promise.race([ended.then(() => true), delay(this.#rt.interruptGraceMs).then(() => false)]);
    if (!endedInTime) await this.#adapterSession.close();
  }

  /**
   * Steers the live turn with `text` (AdapterSession.steer): resolves the id of the run that took
   * it (recorded there as an info `log` event with the redacted text); undefined when no turn is
   * live, the adapter cannot steer, or the agent refused.
   */
  async steer(text: string): Promise<string | undefined> {
    const run = this.#record.runs.at(-1);
    if (this.#closed || !this.#adapterSession.steer || run?.status !== 'running') return undefined;
    if (!(await this.#adapterSession.steer(text))) return undefined;
    this.#steers += 1;
    this.#sink.emit({
      type: 'log',
      key: `turn:${run.id}:steer:${this.#steers}`,
      level: 'info',
      message: `steered run ${run.id}: ${this.#redactor.redact(text)}`,
    });
    return run.id;
  }

  /**
   * Whether this runner's agent can take a turn with `settings` without a restart: the adapter's
   * answer when it has one (it then applies them), else only the settings of the last run.
   */
  canApplySettings(wanted: { model?: string | undefined; effort?: string | undefined; autonomy: Autonomy }): boolean {
    if (this.#closed) return false;
    const settings: TurnSettings = { model: wanted.model, effort: wanted.effort, autonomy: wanted.autonomy };
    if (this.#adapterSession.canApplySettings) return this.#adapterSession.canApplySettings(settings);
    const last = this.#record.runs.at(-1);
    return last !== undefined && last.model === settings.model && last.effort === settings.effort && last.autonomy === settings.autonomy;
  }

  /**
   * True when the agent an earlier turn started still runs and answers within `timeoutMs`, so
   * the next turn can be given to it (see AdapterSession.ready); false for a closed runner and
   * for adapters that cannot tell. Never rejects.
   */
  async ready(timeoutMs: number): Promise<boolean> {
    if (this.#closed || !this.#adapterSession.ready) return false;
    return this.#adapterSession.ready(timeoutMs).catch(() => false);
  }

  /** True when the adapter can tell a live agent (`ready`), so that this runner may be kept warm between turns. */
  get keepsWarm(): boolean {
    return !this.#closed && this.#adapterSession.ready !== undefined;
  }

  /** True when the adapter can start its agent ahead of a prompt (`start`) and tell it is live (`ready`): it may be prewarmed. */
  get canPrewarm(): boolean {
    return this.keepsWarm && this.#adapterSession.start !== undefined;
  }

  /**
   * Prewarming: starts the agent and negotiates its session without a turn, and waits until
   * the events of the start are handed to the store. Rejects when the adapter cannot start
   * ahead of a prompt or the start fails (the agent is then closed).
   */
  async start(): Promise<void> {
    if (this.#closed || !this.#adapterSession.start) {
      throw new OneWorksError('internal', `the ${this.#rt.adapter.name} adapter cannot start an agent ahead of a prompt`);
    }
    try {
      await this.#adapterSession.start();
    } catch (error) {
      // The caller logs it: the message passes this session's redactor (the credentials it
      // registered), as a turn's error does; the cause is not kept.
      const code = isOneWorksError(error) ? error.code : 'internal';
      throw new OneWorksError(code, this.#redactor.redact(error instanceof Error ? error.message : String(error)));
    }
    await this.#sink.flush();
  }

  /**
   * A prewarmed runner, claimed by a new session: its copy of the record becomes the session's
   * (settings, policy, labels) as the orchestrator recorded it. Only before its first turn, and
   * only for its own session id.
   */
  adopt(record: SessionRecord): Promise<void> {
    // In turn with the record writes of a start still under way: none of them is lost or undone.
    return this.#serially(() => {
      if (record.id !== this.#record.id || this.#record.runs.length > 0) {
        throw new OneWorksError('internal', `runner of session ${this.#record.id} cannot adopt the record of ${record.id}`);
      }
      this.#record = { ...record, ...(this.#record.nativeSessionId ? { nativeSessionId: this.#record.nativeSessionId } : {}) };
    });
  }

  /**
   * Starts the agent now, ahead of the first prompt, without waiting for it (createSession
   * overlaps the spawn and handshake with its acceptance checks and record writes). The first
   * `runTurn` waits for this start; when it failed, that turn starts a new agent the usual way
   * (a `log` warn says so). Does nothing when the adapter cannot start ahead (`canPrewarm`).
   */
  startAhead(): void {
    const session = this.#adapterSession;
    if (this.#closed || this.#ahead || !this.canPrewarm || !session.start) return;
    this.#ahead = session.start().then(
      () => true,
      () => false,
    );
  }

  /** The agent process's pid while it runs (when the adapter tells), for memory accounting. */
  agentPid(): number | undefined {
    return this.#closed ? undefined : this.#adapterSession.agentPid?.();
  }

  /**
   * Best effort: gives the native session `title` (droid: `rename_session`), e.g. after the
   * first turn of a session created with a title. Resolves true once the agent confirmed it;
   * false, never a rejection, when this runner is closed, the adapter cannot rename, no agent
   * process is running for the session, or the call fails or outlasts `timeoutMs` (default
   * RENAME_TIMEOUT_MS), each failure recorded as a `log` event. Never touches the record: the
   * One Works title and every recorded turn outcome stay as they are.
   */
  async renameNative(title: string, options: { timeoutMs?: number } = {}): Promise<boolean> {
    if (this.#closed) return false;
    try {
      const result = await renameBounded(this.#adapterSession, title, options.timeoutMs ?? RENAME_TIMEOUT_MS);
      if (result.ok) return true;
      const message = result.unsupported
        ? `native rename skipped: the ${this.#rt.adapter.name} adapter cannot rename its sessions`
        : `native rename to "${title}" failed (${result.code}): ${result.message}; the session keeps its title in One Works`;
      this.#sink.emit({
        type: 'log',
        key: `rename:${randomBytes(6).toString('hex')}`,
        level: result.unsupported ? 'info' : 'warn',
        message,
      });
      await this.#sink.flush();
    } catch {
      // Best effort: a failure to record the note changes nothing either.
    }
    return false;
  }

  /** Marks the session as needing a person's attention, with notes saying why (e.g. a declined escalation). */
  async needsAttention(notes: string[]): Promise<void> {
    if (notes.length === 0) return;
    await this.#update({
      status: 'needs_attention',
      attention: [...(this.#record.attention ?? []), ...notes.map((n) => this.#redactor.redact(n))],
    });
  }

  /** Stops the agent child (if any) and records the session as closed for this process. */
  async close(reason = 'shutdown'): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#adapterSession.close();
    } finally {
      this.#sink.emit({ type: 'session.closed', key: `session.closed:${randomBytes(6).toString('hex')}`, reason });
      await this.#sink.flush();
    }
  }

  #update(patch: Partial<SessionRecord>): Promise<void> {
    return this.#serially(async () => {
      const next = { ...this.#record, ...patch, updatedAt: new Date().toISOString() };
      for (const [k, v] of Object.entries(patch)) if (v === undefined) delete (next as Record<string, unknown>)[k];
      await this.#rt.store.writeSession(next);
      this.#record = next;
    });
  }

  // Runs record changes one after another, each on the record the previous one left, so that
  // overlapping changes (a start's native id, a decision's session allow, an adopt) never undo
  // each other. A failed change rejects its caller only.
  #serially(step: () => void | Promise<void>): Promise<void> {
    const run = this.#updates.then(step);
    this.#updates = run.catch(() => undefined);
    return run;
  }
}

async function newSessionId(store: Store): Promise<string> {
  for (;;) {
    const id = `s-${randomBytes(5).toString('hex')}`;
    if (!(await store.hasSession(id))) return id;
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
