import { randomUUID } from 'node:crypto';
import {
  type AdapterSession,
  type ChildChannel,
  type ChildExit,
  exitedDuringTurn,
  type SessionIO,
  type SessionSpec,
  stderrSuffix,
  type TurnInput,
  type TurnSettings,
} from '../../core/adapter.js';
import { isOneWorksError, OneWorksError } from '../../core/errors.js';
import type { EventDraft, TurnOutcome } from '../../core/events/index.js';
import { type Connection, createConnection } from '../../core/protocol/index.js';
import type { CodexConfig } from './config.js';
import { codexSeedFiles, describeCodexLaunch } from './launch.js';
import { CODEX_NOTIFICATIONS, CODEX_QUIET_NOTIFICATIONS, CODEX_SERVER_REQUESTS } from './methods.js';
import { answerCommandApproval, answerFileChangeApproval, answerPermissionsApproval, answerUserInput } from './permissions.js';
import { CodexProjector, codexTurnStatus } from './project.js';
import { versionFromUserAgent } from './app-server-client.js';
import {
  CODEX_REQUESTS,
  codexEnvelope,
  DeltaNotificationSchema,
  ErrorNotificationSchema,
  ItemNotificationSchema,
  TokenUsageNotificationSchema,
  TurnNotificationSchema,
  WarningNotificationSchema,
} from './wire.js';

/** Codex is told to ask before running anything it does not consider read-only; One Works' policy answers. */
const APPROVAL_POLICY = 'untrusted';

interface LiveTurn {
  resolve: (outcome: TurnOutcome) => void;
  /** Codex's turn id, once `turn/start` answered. */
  turnId: string | undefined;
  interrupted: boolean;
}

/**
 * One Codex thread in one long-lived `codex app-server` process, many turns. A new session
 * starts a thread (`thread/start`) and records its id durably before any prompt; a later process
 * resumes it with `thread/resume`, and a resume Codex refuses fails with `session_load_failed`,
 * never a fresh thread. A turn settles only on `turn/completed` for its own turn id, or as
 * failed when the child goes away first.
 */
export class CodexSession implements AdapterSession {
  readonly #config: CodexConfig;
  readonly #spec: SessionSpec;
  readonly #io: SessionIO;
  readonly #projector: CodexProjector;
  readonly #epoch = randomUUID();
  /** Turns that completed before `turn/start` answered with their id (never seen on 0.171.0, but nothing forbids it). */
  readonly #early = new Map<string, TurnOutcome>();
  #starting: Promise<void> | undefined;
  #child: ChildChannel | undefined;
  #conn: Connection | undefined;
  #threadId: string | undefined;
  #turn: LiveTurn | undefined;
  #closing: Promise<void> | undefined;
  #exit: ChildExit | undefined;
  #resuming = false;
  #warnings = 0;
  /** Turns Codex accepted in this process, and the settings changes reported. */
  #turns = 0;
  #settingsChanges = 0;
  /** The model and effort Codex was last given (thread/start, turn/start). */
  readonly #applied: { model: string | undefined; effort: string | undefined } = { model: undefined, effort: undefined };
  readonly info: AdapterSession['info'] = {};

  constructor(config: CodexConfig, spec: SessionSpec, io: SessionIO) {
    this.#config = config;
    this.#spec = spec;
    this.#io = io;
    this.#projector = new CodexProjector(spec.workspace);
    if (spec.nativeSessionId) this.info.nativeSessionId = spec.nativeSessionId;
  }

  async prompt(input: TurnInput): Promise<TurnOutcome> {
    if (this.#turn) throw new OneWorksError('session_busy', 'a turn is already running in this session');
    try {
      await this.#start();
    } catch (error) {
      await this.close();
      throw error;
    }
    if (this.#exit || !this.#conn) throw new OneWorksError('process_exited', 'codex is no longer running for this session');
    this.#projector.beginTurn();
    const turn: LiveTurn = { resolve: () => undefined, turnId: undefined, interrupted: false };
    const settled = new Promise<TurnOutcome>((resolve) => {
      turn.resolve = resolve;
    });
    this.#turn = turn;
    const settings = input.settings;
    const model = settings?.model ?? this.#spec.model;
    const effort = settings?.effort ?? this.#spec.effort;
    try {
      const started = await this.#conn.request(CODEX_REQUESTS.turnStart, {
        threadId: this.#threadId!,
        input: [{ type: 'text', text: input.text, text_elements: [] }],
        ...(model && model !== 'inherit' ? { model } : {}),
        ...(effort ? { effort } : {}),
      });
      turn.turnId = started.turn.id;
      // An interrupt asked for before Codex named the turn is sent now, not lost (which would
      // leave the caller to kill the process after its grace).
      if (turn.interrupted) void this.interrupt().catch(() => undefined);
      this.#noteApplied(model && model !== 'inherit' ? model : undefined, effort);
    } catch (error) {
      if (this.#turn === turn) this.#turn = undefined;
      throw error;
    }
    const early = this.#early.get(turn.turnId);
    if (early) this.#settle(turn, early);
    return settled;
  }

  // Codex took this turn's model and effort (turn/start answered): what changed since the last
  // turn is a `settings.changed` event, as droid and Claude Code report theirs.
  #noteApplied(model: string | undefined, effort: string | undefined): void {
    const changed: Record<string, string> = {};
    if (model && model !== this.#applied.model) {
      if (this.#turns > 0 || this.#applied.model !== undefined) changed.model = model;
      this.#applied.model = model;
    }
    if (effort && effort !== this.#applied.effort) {
      if (this.#turns > 0 || this.#applied.effort !== undefined) changed.effort = effort;
      this.#applied.effort = effort;
    }
    this.#turns += 1;
    if (Object.keys(changed).length === 0) return;
    this.#settingsChanges += 1;
    this.#io.emit({ type: 'settings.changed', key: `settings.changed:${this.#epoch}:${this.#settingsChanges}`, settings: changed });
  }

  /**
   * Model and effort travel with each `turn/start`; autonomy is One Works' policy. A model or effort
   * Codex was given stays for later turns (0.171.0: "this turn and subsequent turns"), so going back
   * to Codex's own default needs a new process.
   */
  canApplySettings(settings: TurnSettings): boolean {
    const unsets = (next: string | undefined, now: string | undefined): boolean => next === undefined && now !== undefined;
    return !unsets(settings.model, this.#applied.model) && !unsets(settings.effort, this.#applied.effort);
  }

  /**
   * True when the codex an earlier turn started still answers within `timeoutMs` and still has
   * this session's thread loaded (`thread/loaded/list`, a round trip in memory); false when none
   * was started, it exited or is closing, a turn is live, or it did not answer. Never rejects.
   */
  async ready(timeoutMs: number): Promise<boolean> {
    if (!this.#starting || this.#closing || this.#exit || this.#turn) return false;
    const deadline = Date.now() + timeoutMs;
    const started = await Promise.race([
      this.#starting.then(
        () => true,
        () => false,
      ),
      new Promise<boolean>((resolve) => setTimeout(resolve, timeoutMs, false).unref()),
    ]);
    const conn = this.#conn;
    if (!started || this.#exit || this.#closing || conn?.state !== 'open') return false;
    try {
      const loaded = await conn.request(CODEX_REQUESTS.threadLoadedList, {}, { timeoutMs: Math.max(1, deadline - Date.now()) });
      return !this.#exit && this.#threadId !== undefined && loaded.data.includes(this.#threadId);
    } catch {
      return false;
    }
  }

  agentPid(): number | undefined {
    return this.#exit ? undefined : this.#child?.pid;
  }

  /**
   * `turn/steer`: adds `text` to the live turn, which Codex gives the model with its next request
   * of that turn. False when no turn is live yet (Codex has not named it) or Codex refuses (the
   * turn ended meanwhile: `expectedTurnId` no longer matches).
   */
  async steer(text: string): Promise<boolean> {
    const turn = this.#turn;
    if (!this.#conn || this.#exit || !turn?.turnId || turn.interrupted) return false;
    try {
      await this.#conn.request(CODEX_REQUESTS.turnSteer, {
        threadId: this.#threadId!,
        expectedTurnId: turn.turnId,
        input: [{ type: 'text', text, text_elements: [] }],
      });
    } catch (error) {
      if (isOneWorksError(error, 'peer_error')) return false;
      throw error;
    }
    return this.#turn === turn;
  }

  async interrupt(): Promise<void> {
    const turn = this.#turn;
    if (!this.#conn || this.#exit || !turn) return;
    turn.interrupted = true;
    if (!turn.turnId) return;
    await this.#conn.request(
      CODEX_REQUESTS.turnInterrupt,
      { threadId: this.#threadId!, turnId: turn.turnId },
      { timeoutMs: this.#config.interruptGraceMs },
    );
  }

  close(): Promise<void> {
    this.#closing ??= this.#doClose();
    return this.#closing;
  }

  async #doClose(): Promise<void> {
    try {
      await this.#starting?.catch(() => undefined);
      if (this.#child && !this.#exit) await this.#child.stop('shutdown');
    } finally {
      await this.#conn?.close();
    }
  }

  #start(): Promise<void> {
    this.#starting ??= this.#doStart();
    return this.#starting;
  }

  async #doStart(): Promise<void> {
    const launch = describeCodexLaunch(this.#config, this.#spec.cli, {
      cwd: this.#spec.workspace,
      home: this.#spec.home,
      hostEnv: process.env,
    });
    const child = await this.#io.launch(launch, codexSeedFiles(this.#config, this.#spec.workspace));
    this.#child = child;
    const conn = createConnection(child.transport, codexEnvelope, { defaultTimeoutMs: this.#config.requestTimeoutMs, idType: 'number' });
    this.#conn = conn;
    conn.onNotification((method, params) => this.#onNotification(method, params));
    conn.onProblem((problem) =>
      this.#io.emit({ type: 'error', key: `problem:${randomUUID()}`, code: problem.code, message: problem.message }),
    );
    const context = { io: this.#io, workspace: this.#spec.workspace, item: (id: string) => this.#projector.item(id) };
    conn.onRequest(CODEX_SERVER_REQUESTS.commandApproval, (params) => answerCommandApproval(params, context));
    conn.onRequest(CODEX_SERVER_REQUESTS.fileChangeApproval, (params) => answerFileChangeApproval(params, context));
    conn.onRequest(CODEX_SERVER_REQUESTS.permissionsApproval, (params) => answerPermissionsApproval(params, context));
    conn.onRequest(CODEX_SERVER_REQUESTS.userInput, (params) => answerUserInput(params, context));
    const exited = child.exited.then((exit) => {
      this.#onExit(exit);
      return exit;
    });
    await conn.start();
    const early = exited.then((exit) => {
      throw this.#exitError(exit, 'during the handshake');
    });
    early.catch(() => undefined);
    await Promise.race([this.#handshake(conn), early]);
  }

  async #handshake(conn: Connection): Promise<void> {
    const timeoutMs = this.#config.startupTimeoutMs;
    const initialized = await conn.request(
      CODEX_REQUESTS.initialize,
      { clientInfo: { name: 'one-works', title: 'One Works', version: '0' }, capabilities: null },
      { timeoutMs },
    );
    await conn.notify('initialized', undefined);
    const model = this.#spec.model && this.#spec.model !== 'inherit' ? this.#spec.model : undefined;
    this.#applied.model = model;
    const settings = {
      cwd: this.#spec.workspace,
      approvalPolicy: APPROVAL_POLICY,
      sandbox: this.#config.commandSandbox,
      ...(model ? { model } : {}),
      ...(this.#config.developerInstructions ? { developerInstructions: this.#config.developerInstructions } : {}),
    } as const;
    if (this.#spec.nativeSessionId) {
      this.#resuming = true;
      try {
        const resumed = await conn.request(
          CODEX_REQUESTS.threadResume,
          { threadId: this.#spec.nativeSessionId, ...settings },
          { timeoutMs },
        );
        this.#threadId = resumed.thread.id;
      } catch (error) {
        if (!isOneWorksError(error, 'peer_error')) throw error;
        throw this.#loadError(error.message);
      }
    } else {
      const started = await conn.request(CODEX_REQUESTS.threadStart, settings, { timeoutMs });
      this.#threadId = started.thread.id;
      this.info.nativeSessionId = started.thread.id;
      await this.#io.setNativeSessionId(started.thread.id);
    }
    this.info.versionFacts = { codexVersion: versionFromUserAgent(initialized.userAgent) ?? this.#spec.cli.version };
    this.#io.emit({
      type: 'session.started',
      key: `session.started:${this.#epoch}`,
      adapter: 'codex',
      workspace: this.#spec.workspace,
      resumed: this.#resuming,
      cliVersion: this.#spec.cli.version,
      versionFacts: this.info.versionFacts,
    });
  }

  #emit(drafts: EventDraft[]): void {
    for (const draft of drafts) this.#io.emit(draft);
  }

  #onNotification(method: string, params: unknown): void {
    switch (method) {
      case CODEX_NOTIFICATIONS.itemStarted: {
        const parsed = ItemNotificationSchema.safeParse(params);
        if (parsed.success && parsed.data.threadId === this.#threadId) this.#emit(this.#projector.itemStarted(parsed.data.item));
        else this.#native(method, params, parsed.success);
        return;
      }
      case CODEX_NOTIFICATIONS.itemCompleted: {
        const parsed = ItemNotificationSchema.safeParse(params);
        if (parsed.success && parsed.data.threadId === this.#threadId) this.#emit(this.#projector.itemCompleted(parsed.data.item));
        else this.#native(method, params, parsed.success);
        return;
      }
      case CODEX_NOTIFICATIONS.agentMessageDelta:
      case CODEX_NOTIFICATIONS.commandOutputDelta: {
        const parsed = DeltaNotificationSchema.safeParse(params);
        if (!parsed.success) {
          this.#native(method, params, false);
          return;
        }
        const { itemId, delta } = parsed.data;
        this.#emit(
          method === CODEX_NOTIFICATIONS.agentMessageDelta
            ? this.#projector.agentDelta(itemId, delta)
            : this.#projector.commandOutput(itemId, delta),
        );
        return;
      }
      case CODEX_NOTIFICATIONS.tokenUsageUpdated: {
        const parsed = TokenUsageNotificationSchema.safeParse(params);
        if (!parsed.success) {
          this.#native(method, params, false);
          return;
        }
        if (parsed.data.turnId === this.#turn?.turnId || this.#turn?.turnId === undefined)
          this.#projector.usage(parsed.data.tokenUsage.last);
        return;
      }
      case CODEX_NOTIFICATIONS.turnCompleted: {
        const parsed = TurnNotificationSchema.safeParse(params);
        if (!parsed.success) {
          this.#native(method, params, false);
          return;
        }
        this.#onTurnCompleted(parsed.data.turn.id, parsed.data.turn.status, parsed.data.turn.error?.message);
        return;
      }
      case CODEX_NOTIFICATIONS.error: {
        const parsed = ErrorNotificationSchema.safeParse(params);
        if (!parsed.success) {
          this.#native(method, params, false);
          return;
        }
        const { error, willRetry, turnId } = parsed.data;
        this.#io.emit({
          type: 'error',
          key: `codex-error:${turnId}:${randomUUID()}`,
          code: 'agent_error',
          message: `codex: ${error.message}${error.additionalDetails ? ` (${error.additionalDetails})` : ''}`,
          retryable: willRetry,
        });
        return;
      }
      case CODEX_NOTIFICATIONS.warning: {
        // A warning (e.g. "Model metadata for `x` not found", every turn on 0.171.0) is an event, never a failure.
        const parsed = WarningNotificationSchema.safeParse(params);
        if (!parsed.success) {
          this.#native(method, params, false);
          return;
        }
        this.#warnings += 1;
        this.#io.emit({
          type: 'log',
          key: `warning:${this.#epoch}:${this.#warnings}`,
          level: 'warn',
          message: `codex: ${parsed.data.message}`,
        });
        return;
      }
      case CODEX_NOTIFICATIONS.turnStarted:
        return;
      default:
        if (!CODEX_QUIET_NOTIFICATIONS.has(method)) this.#native(method, params, true);
    }
  }

  // A native fact with no mapping (or one that did not parse) is kept, never dropped silently.
  #native(method: string, params: unknown, parsed: boolean): void {
    this.#io.emit({
      type: 'native',
      key: `native:${this.#epoch}:${randomUUID()}`,
      nativeType: parsed ? method : `${method} (unparsed)`,
      payload: params,
    });
  }

  #onTurnCompleted(turnId: string, status: string, errorMessage: string | undefined): void {
    const turn = this.#turn;
    const { status: outcomeStatus, reason } = codexTurnStatus(status, errorMessage);
    if (outcomeStatus === 'interrupted') this.#emit(this.#projector.closeOpenSpans('interrupted'));
    const usage = this.#projector.turnUsage();
    const outcome: TurnOutcome = { status: outcomeStatus, reason, text: this.#projector.turnText(), usage };
    if (!turn) return;
    if (turn.turnId === undefined) {
      this.#early.set(turnId, outcome);
      return;
    }
    // Only our own turn settles it: a completion for another turn id is not ours.
    if (turn.turnId !== turnId) return;
    this.#settle(turn, outcome);
  }

  #settle(turn: LiveTurn, outcome: TurnOutcome): void {
    if (this.#turn !== turn) return;
    this.#turn = undefined;
    if (outcome.usage.reported) this.#io.emit({ type: 'usage', key: `usage:${turn.turnId}`, scope: 'turn', usage: outcome.usage });
    turn.resolve(outcome);
  }

  #onExit(exit: ChildExit): void {
    this.#exit = exit;
    this.#emit(this.#projector.closeOpenSpans('the agent process exited before the tool finished'));
    const turn = this.#turn;
    if (!turn) return;
    this.#turn = undefined;
    const ended = exitedDuringTurn('codex', exit, this.#child?.stderrTail(), {
      key: `exit:${this.#epoch}`,
      interrupted: turn.interrupted,
      text: this.#projector.turnText(),
    });
    this.#io.emit(ended.event);
    turn.resolve(ended.outcome);
  }

  #exitError(exit: ChildExit, when: string): OneWorksError {
    const detail = `codex exited (${exit.signal ?? exit.exitCode}) ${when}${stderrSuffix(this.#child?.stderrTail())}`;
    return this.#resuming ? this.#loadError(detail) : new OneWorksError('process_exited', detail);
  }

  #loadError(detail: string): OneWorksError {
    return new OneWorksError(
      'session_load_failed',
      `codex could not resume its thread ${this.#spec.nativeSessionId}: ${detail.slice(-500)}; the conversation was not replaced`,
    );
  }
}
