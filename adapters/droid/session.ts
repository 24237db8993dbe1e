import { randomUUID } from 'node:crypto';
import type {
  AdapterSession,
  ChildChannel,
  ChildExit,
  LaunchSpec,
  SessionIO,
  SessionSpec,
  TurnInput,
  TurnSettings,
} from '../../core/adapter.js';
import { ERROR_CODES, OneWorksError, isOneWorksError } from '../../core/errors.js';
import type { TurnOutcome, Usage } from '../../core/events/index.js';
import { createConnection, type Connection } from '../../core/protocol/index.js';
import type { DroidConfig } from './config.js';
import { createDroidEnvelope } from './envelope.js';
import { DROID_METHODS, LoadSession, UpdateSessionSettings, AddUserMessage, InterruptSession, ListCommands } from './methods.js';
import { checkNegotiation, parseInitializeResult, parseLoadResult, readAnnouncedVersions } from './negotiate.js';
import { answerAskUser, answerPermission } from './permissions.js';
import { createDroidProjector, type DroidProjector } from './project.js';
import { renameDroidSession } from './rename.js';
import { composeSessionParams, InitializeSessionWithPrompt, nativeTags, resumedPromptNotice } from './session-params.js';
import { describeDroidLaunch } from './launch.js';
import { NATIVE_AUTONOMY, workspaceAllowlist } from './native-permissions.js';
import { composeDroidSettings, type ComposedSettings } from './settings.js';
import { isTransportFailure, OBSERVED_TYPES } from './degrade.js';
import { ONESHOT_NOTE, OneShotTurns } from './oneshot-turn.js';
import { droidProtocolFacts } from './versions.js';

const API_VERSION = '1.0.0';

interface LiveTurn {
  messageId: string;
  resolve: (outcome: TurnOutcome) => void;
  /** Something of the turn was seen (assistant text, a tool span, an ask, a hook): it is never replayed. */
  observed: boolean;
  /** The turn ended because droid went away by itself (exited, closed its output), not by a close or cancel. */
  transportFailure: boolean;
}

/** How a stream-jsonrpc turn attempt ended. */
interface Attempt {
  outcome: TurnOutcome;
  observed: boolean;
  transportFailure: boolean;
}

/**
 * One native droid conversation. The child starts lazily on the first prompt: launch →
 * version negotiation on the first frame → initialize (or load, when resuming; a failed load
 * never silently creates a replacement) → flat settings with droid's own autonomy at `off` (One
 * Works' autonomy is applied by its policy when droid asks).
 * A turn settles only on `agent_turn_completed` whose `turnId` is the submitted message id, or
 * as failed when the child goes away first.
 *
 * Degradation (per run, i.e. per prompt): when droid goes away during a turn before anything of
 * it was observed, droid is restarted, the session loaded and the turn sent once more (a `warn`
 * says so); once something was observed, the turn ends failed and is never replayed. After two
 * such failures, or a start that fails outright (droid exits, closes its output or does not
 * answer), the session runs in one-shot mode (`adapters.droid.fallback: oneshot`, oneshot-turn.ts)
 * for the rest of this DroidSession's life; with `fallback: none` the turn fails instead.
 */
export class DroidSession implements AdapterSession {
  readonly #config: DroidConfig;
  readonly #spec: SessionSpec;
  readonly #io: SessionIO;
  #projector: DroidProjector;
  #mode: 'stream-jsonrpc' | 'oneshot' = 'stream-jsonrpc';
  readonly #oneShot: OneShotTurns;
  /** True from prompt() until its outcome: one turn at a time, whatever the mode. */
  #busy = false;
  #starting: Promise<void> | undefined;
  #child: ChildChannel | undefined;
  #conn: Connection | undefined;
  #turn: LiveTurn | undefined;
  #closing: Promise<void> | undefined;
  #exit: ChildExit | undefined;
  #negotiationError: OneWorksError | undefined;
  /** The settings the running droid has (sent at start or by a later turn). */
  #applied: TurnSettings;
  readonly info: AdapterSession['info'] = {};

  constructor(config: DroidConfig, spec: SessionSpec, io: SessionIO) {
    this.#config = config;
    this.#spec = spec;
    this.#io = io;
    this.#projector = this.#newProjector();
    if (spec.nativeSessionId) this.info.nativeSessionId = spec.nativeSessionId;
    this.#applied = { model: spec.model, effort: spec.effort, autonomy: spec.autonomy };
    this.#oneShot = new OneShotTurns({
      config,
      spec,
      io,
      nativeSessionId: () => this.info.nativeSessionId,
      setNativeSessionId: async (id) => {
        this.info.nativeSessionId = id;
        await this.#io.setNativeSessionId(id);
      },
    });
  }

  async prompt(input: TurnInput): Promise<TurnOutcome> {
    if (this.#busy || this.#turn) throw new OneWorksError('session_busy', 'a turn is already running in this session');
    this.#busy = true;
    try {
      return await this.#runTurn(input);
    } finally {
      this.#busy = false;
    }
  }

  // The degradation ladder of one run: stream-jsonrpc, one retry when nothing was observed, then one-shot.
  async #runTurn(input: TurnInput): Promise<TurnOutcome> {
    if (this.#mode === 'oneshot') return this.#runOneShot(input);
    let failures = 0;
    // Recorded before the start, never between the start and the prompt: a close that waits for
    // the start must find the prompt already on its way (it ends droid's stdin).
    await this.#io.setTurnMode?.('stream-jsonrpc');
    for (;;) {
      try {
        await this.#start();
      } catch (error) {
        if (this.#closing || !isTransportFailure(error)) {
          await this.close();
          throw error;
        }
        await this.#discardChild();
        return this.#fallBack(input, `droid's start failed (${errorReason(error)}: ${errorMessage(error)})`, error);
      }
      const attempt = await this.#streamTurn(input);
      if (!attempt.transportFailure || this.#closing) return attempt.outcome;
      failures += 1;
      // Something of the turn was seen (text, a tool, an ask): replaying it could repeat its effects.
      if (attempt.observed) return attempt.outcome;
      await this.#discardChild();
      // Closed meanwhile (a cancel, a shutdown): no droid starts again for this turn.
      if (this.#closing) return attempt.outcome;
      const why = `droid went away before anything of the turn was observed (${attempt.outcome.reason})`;
      if (failures >= 2) return this.#fallBack(input, `${why}, for the second time in this run`, attempt.outcome);
      this.#io.emit({
        type: 'log',
        key: `degrade:${input.runId}:retry`,
        level: 'warn',
        message: `${why}; restarting droid, loading the session and sending the turn once more`,
      });
    }
  }

  // A prompt on a started stream-jsonrpc droid, settled by its completion or by droid going away.
  async #streamTurn(input: TurnInput): Promise<Attempt> {
    const conn = this.#conn!;
    if (input.settings && !sameModelAndEffort(input.settings, this.#applied)) {
      try {
        await this.#applyTurnSettings(conn, input.settings);
      } catch (error) {
        return { outcome: failedOutcome(errorReason(error), ''), observed: false, transportFailure: false };
      }
    }
    const messageId = randomUUID();
    let turn!: LiveTurn;
    const settled = new Promise<TurnOutcome>((resolve) => {
      turn = { messageId, resolve, observed: false, transportFailure: false };
      this.#turn = turn;
    });
    this.#projector.beginTurn(messageId);
    try {
      // The response only acknowledges receipt; completion comes as a notification.
      await conn.request(AddUserMessage, { text: input.text, messageId });
    } catch (error) {
      // droid went away while the message was on its way: nothing of the turn can have been seen yet.
      if (!this.#closing && isTransportFailure(error)) turn.transportFailure = true;
      this.#settle(failedOutcome(errorReason(error), this.#projector.turnText(messageId)));
    }
    const outcome = await settled;
    return { outcome, observed: turn.observed, transportFailure: turn.transportFailure };
  }

  // The switch to one-shot mode (or, with `fallback: none`, the end of the run).
  async #fallBack(input: TurnInput, why: string, failure: unknown): Promise<TurnOutcome> {
    if (this.#config.fallback === 'none') {
      this.#io.emit({
        type: 'log',
        key: `degrade:${input.runId}:none`,
        level: 'warn',
        message: `${why}; adapters.droid.fallback is none, so the turn fails`,
      });
      if (failure instanceof Error) {
        await this.close();
        throw failure;
      }
      return failure as TurnOutcome;
    }
    this.#mode = 'oneshot';
    this.#io.emit({
      type: 'log',
      key: `degrade:${input.runId}:oneshot`,
      level: 'warn',
      message: `${why}; the session continues in ${ONESHOT_NOTE}`,
    });
    return this.#runOneShot(input);
  }

  async #runOneShot(input: TurnInput): Promise<TurnOutcome> {
    await this.#io.setTurnMode?.('oneshot');
    return this.#oneShot.run(input, input.settings ?? this.#applied);
  }

  // Stops a failed child and forgets it, so that the next #start() launches and loads afresh.
  async #discardChild(): Promise<void> {
    const child = this.#child;
    try {
      if (child && !this.#exit) await child.stop('crash');
    } finally {
      this.#conn?.close();
      this.#child = undefined;
      this.#conn = undefined;
      this.#starting = undefined;
      this.#exit = undefined;
      this.#negotiationError = undefined;
      this.#projector = this.#newProjector();
    }
  }

  #newProjector(): DroidProjector {
    // A One Works title is set at creation (droid then marks it manual); automatic titles never replace it.
    return createDroidProjector({ workspace: this.#spec.workspace, manualTitle: this.#spec.title !== undefined });
  }

  /**
   * droid changes model, effort and autonomy of a live session (`update_session_settings`), but
   * cannot go back to its own default model or effort once one was set: such a turn needs a new
   * droid, started with the turn's settings.
   */
  canApplySettings(settings: TurnSettings): boolean {
    const unsets = (next: string | undefined, now: string | undefined): boolean => next === undefined && now !== undefined;
    return !unsets(settings.model, this.#applied.model) && !unsets(settings.effort, this.#applied.effort);
  }

  /**
   * True when a droid started by an earlier turn still runs and answers a cheap request
   * (`list_commands`; an error answer counts too, it is an answer) within `timeoutMs`.
   */
  async ready(timeoutMs: number): Promise<boolean> {
    // One-shot mode keeps no process between turns.
    if (this.#mode === 'oneshot' || !this.#starting || this.#closing || this.#exit || this.#turn) return false;
    try {
      await this.#starting;
    } catch {
      return false;
    }
    const conn = this.#conn;
    if (conn?.state !== 'open' || this.#exit) return false;
    try {
      await conn.request(ListCommands, {}, { timeoutMs });
      return !this.#exit;
    } catch (error) {
      return isOneWorksError(error, 'peer_error') && !this.#exit;
    }
  }

  agentPid(): number | undefined {
    if (this.#mode === 'oneshot') return this.#oneShot.pid();
    return this.#child && !this.#exit ? this.#child.pid : undefined;
  }

  /** Starts droid and negotiates the session without a prompt (prewarming); a failed start closes it. */
  async start(): Promise<void> {
    try {
      await this.#start();
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  async interrupt(): Promise<void> {
    // A one-shot droid has no interrupt request: the process is stopped.
    if (this.#mode === 'oneshot') return this.#oneShot.stop('cancel');
    const conn = this.#conn;
    if (conn?.state !== 'open') return;
    await conn.request(InterruptSession, {}, { timeoutMs: this.#config.interruptGraceMs });
  }

  /**
   * `droid.rename_session` on the running droid (see rename.ts). Never starts droid: rejects
   * with connection_closed when no droid runs for this session; waits for a start in progress.
   */
  async rename(title: string, signal?: AbortSignal): Promise<void> {
    await this.#starting?.catch(() => undefined);
    const conn = this.#exit || this.#closing ? undefined : this.#conn;
    await renameDroidSession(conn, title, {
      redactor: this.#io.redactor,
      timeoutMs: this.#config.requestTimeoutMs,
      ...(signal ? { signal } : {}),
    });
  }

  close(): Promise<void> {
    this.#closing ??= this.#doClose();
    return this.#closing;
  }

  async #doClose(): Promise<void> {
    try {
      await this.#starting?.catch(() => undefined);
      await this.#oneShot.stop('shutdown');
      if (this.#child && !this.#exit) await this.#child.stop('shutdown');
    } finally {
      this.#conn?.close();
    }
  }

  #start(): Promise<void> {
    this.#starting ??= this.#doStart();
    return this.#starting;
  }

  async #doStart(): Promise<void> {
    const expected = droidProtocolFacts(this.#spec.cli.expected?.facts);
    if (!expected) {
      throw new OneWorksError(
        'protocol_mismatch',
        `droid ${this.#spec.cli.version} is not a qualified version (not in the built-in table or one-works.lock); run \`one-works adapters upgrade droid ${this.#spec.cli.version}\` to probe it first`,
        { data: { cliVersion: this.#spec.cli.version } },
      );
    }
    // Commands the workspace's own droid settings allow would run unasked: droid is told to ask.
    const settings = composeDroidSettings(this.#config, { alsoDenied: workspaceAllowlist(this.#spec.workspace) });
    const child = await this.#io.launch(this.#describeLaunch(settings), settings.files);
    this.#child = child;
    const conn = createConnection(child.transport, createDroidEnvelope({ protocolVersion: expected.protocolVersion }), {
      defaultTimeoutMs: this.#config.requestTimeoutMs,
      idPrefix: 'ow-',
    });
    this.#conn = conn;
    // Only the first frame is judged: the tap then removes itself, so later frames skip it.
    const stopTap = conn.onInbound((frame) => {
      stopTap();
      try {
        checkNegotiation(
          readAnnouncedVersions(frame),
          { apiVersion: API_VERSION, protocolVersion: expected.protocolVersion },
          this.#spec.cli.version,
        );
      } catch (error) {
        this.#negotiationError = error as OneWorksError;
        conn.close(this.#negotiationError);
      }
    });
    conn.onNotification((_method, params) => {
      if (this.#conn === conn) this.#onNotification(params);
    });
    conn.onProblem((problem) => {
      this.#io.emit({ type: 'error', key: `problem:${randomUUID()}`, code: problem.code, message: problem.message });
    });
    conn.onRequest(DROID_METHODS.requestPermission, (params, ctx) => {
      this.#markObserved();
      return answerPermission(params, ctx, this.#io, this.#spec.workspace);
    });
    conn.onRequest(DROID_METHODS.askUser, (params, ctx) => {
      this.#markObserved();
      return answerAskUser(params, ctx, this.#io, this.#spec.workspace);
    });
    // A discarded child's late exit or EOF must not touch the child that replaced it.
    void child.exited.then((exit) => {
      if (this.#child === child) this.#onExit(exit);
    });
    void conn.closed.then(() => {
      if (this.#child === child) return this.#onOutputClosed(child);
    });
    await conn.start();
    try {
      await this.#handshake(conn, expected.protocolVersion);
    } catch (error) {
      throw this.#negotiationError ?? error;
    }
  }

  async #handshake(conn: Connection, protocolVersion: string): Promise<void> {
    const timeoutMs = this.#config.startupTimeoutMs;
    // A restarted droid (degradation) loads the session its predecessor created.
    const nativeSessionId = this.info.nativeSessionId;
    const resumed = nativeSessionId !== undefined;
    // Read at every start: a missing rules file fails the start with config_invalid.
    const params = await composeSessionParams(this.#config);
    for (const notice of params.notices) this.#io.emit(notice);
    if (resumed) {
      let raw: unknown;
      try {
        raw = await conn.request(LoadSession, { sessionId: nativeSessionId, ...params.load }, { timeoutMs });
      } catch (error) {
        if (this.#negotiationError) throw this.#negotiationError;
        throw new OneWorksError(
          'session_load_failed',
          `droid could not load its session ${nativeSessionId}: ${errorMessage(error)}; the conversation was not replaced`,
          { cause: error },
        );
      }
      const loaded = parseLoadResult(raw);
      const kept = resumedPromptNotice(params, raw);
      if (kept) this.#io.emit(kept);
      for (const draft of this.#projector.projectHistory(loaded.session.messages)) this.#io.emit(draft);
      await this.#applySettings(conn, timeoutMs);
    } else {
      const raw = await conn.request(
        InitializeSessionWithPrompt,
        {
          machineId: 'one-works',
          cwd: this.#spec.workspace,
          autonomyLevel: NATIVE_AUTONOMY,
          // Missions and worktrees stay off: no mission mode, no worktree params.
          interactionMode: 'auto',
          ...params.initialize,
          ...(this.#spec.title ? { title: this.#spec.title } : {}),
          // Labels become droid session tags at creation only; load_session never re-sends them.
          ...nativeTags(this.#spec.tags),
        },
        { timeoutMs },
      );
      const init = parseInitializeResult(raw);
      this.info.nativeSessionId = init.sessionId;
      // The settings go out while the native id is recorded: both are done before any prompt,
      // and the record write (fsynced) no longer delays the settings round trip.
      await Promise.all([this.#io.setNativeSessionId(init.sessionId), this.#applySettings(conn, timeoutMs)]);
    }
    this.#applied = { model: this.#spec.model, effort: this.#spec.effort, autonomy: this.#spec.autonomy };
    this.info.versionFacts = { apiVersion: API_VERSION, protocolVersion };
    this.#io.emit({
      type: 'session.started',
      key: `session.started:${randomUUID()}`,
      adapter: 'droid',
      workspace: this.#spec.workspace,
      resumed,
      cliVersion: this.#spec.cli.version,
      versionFacts: this.info.versionFacts,
    });
  }

  // Always explicit (droid clients have seen an omitted autonomy level behave as high), and always
  // `off`: droid then asks before every call that is not read-only, and One Works' policy decides
  // at the session's own autonomy level (native-permissions.ts); a resumed session is lowered too.
  // When droid refuses the model override (an organisation policy, a model the account cannot use),
  // the settings are sent again without it and the session goes on with droid's default model;
  // if they fail again, the model was not the problem and the first error stands.
  async #applySettings(conn: Connection, timeoutMs: number): Promise<void> {
    const model = this.#spec.model && this.#spec.model !== 'inherit' ? this.#spec.model : undefined;
    const base = { autonomyLevel: NATIVE_AUTONOMY, ...(this.#spec.effort ? { reasoningEffort: this.#spec.effort } : {}) };
    try {
      await conn.request(UpdateSessionSettings, { ...base, ...(model ? { modelId: model } : {}) }, { timeoutMs });
    } catch (error) {
      if (model === undefined || !isOneWorksError(error) || error.code !== ERROR_CODES.PEER_ERROR) throw error;
      try {
        await conn.request(UpdateSessionSettings, base, { timeoutMs });
      } catch {
        throw error;
      }
      this.#io.emit({
        type: 'model.warning',
        key: `model.warning:${randomUUID()}`,
        model,
        message: `${errorMessage(error)}; continuing with droid's default model`,
      });
    }
  }

  // A later turn's model and effort on the running droid: sent together (a custom model resets
  // the effort), with the native autonomy kept at NATIVE_AUTONOMY (the turn's autonomy is One
  // Works' policy's, read from the turn's run record).
  async #applyTurnSettings(conn: Connection, settings: TurnSettings): Promise<void> {
    await conn.request(UpdateSessionSettings, {
      autonomyLevel: NATIVE_AUTONOMY,
      ...(settings.model && settings.model !== 'inherit' ? { modelId: settings.model } : {}),
      ...(settings.effort ? { reasoningEffort: settings.effort } : {}),
    });
    // droid reports the change itself (settings_updated → settings.changed events).
    this.#applied = { ...settings };
  }

  #describeLaunch(settings: ComposedSettings): LaunchSpec {
    return describeDroidLaunch(this.#config, this.#spec.cli, { cwd: this.#spec.workspace, home: this.#spec.home, settings });
  }

  #onNotification(params: unknown): void {
    for (const draft of this.#projector.project(params)) {
      if (OBSERVED_TYPES.has(draft.type)) this.#markObserved();
      this.#io.emit(draft);
    }
    const completed = this.#projector.takeCompletion();
    if (!completed || !this.#turn) return;
    if (completed.turnId !== this.#turn.messageId) {
      this.#io.emit({
        type: 'log',
        key: `unrelated-turn:${completed.turnId ?? 'none'}:${randomUUID()}`,
        level: 'warn',
        message: `ignored a turn completion for another turn (${completed.turnId ?? 'no turn id'})`,
      });
      return;
    }
    this.#settle({
      status: completed.reason === 'completed' ? 'completed' : completed.reason === 'cancelled' ? 'interrupted' : 'failed',
      reason: completed.reason,
      text: this.#projector.turnText(this.#turn.messageId),
      usage: completed.usage,
    });
  }

  #onExit(exit: ChildExit): void {
    this.#exit = exit;
    for (const draft of this.#projector.closeOpenSpans('the agent process exited before the tool finished')) this.#io.emit(draft);
    if (this.#turn) {
      // Gone by itself (not stopped by a close or a cancel): a transport failure of the turn.
      if (!this.#closing && exit.stopReason === undefined) this.#turn.transportFailure = true;
      const how = exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.exitCode}`;
      const tail = this.#child?.stderrTail().trim();
      this.#io.emit({
        type: 'error',
        key: `exit:${randomUUID()}`,
        code: 'process_exited',
        message: `droid ${how} before the turn completed${tail ? `; stderr: ${tail.slice(-500)}` : ''}`,
      });
      this.#settle(failedOutcome('process_exited', this.#projector.turnText(this.#turn.messageId)));
    }
    this.#conn?.close(new OneWorksError('process_exited', 'droid exited'));
  }

  // droid closed its stdout mid-turn while the process lives on: nothing more can arrive for the
  // turn. The exit gets `drainFallbackMs` to follow (it carries the code and stderr); after that
  // the turn fails as connection_closed and the child is stopped, instead of waiting for it.
  async #onOutputClosed(child: ChildChannel): Promise<void> {
    if (this.#exit || this.#closing || !this.#turn) return;
    const exited = await Promise.race([child.exited.then(() => true), delay(this.#config.drainFallbackMs).then(() => false)]);
    const turn = this.#turn;
    if (exited || this.#exit || this.#closing || !turn) return;
    this.#io.emit({
      type: 'error',
      key: `output-closed:${randomUUID()}`,
      code: 'connection_closed',
      message: `droid closed its output before the turn completed and had not exited ${this.#config.drainFallbackMs} ms later; stopping it`,
    });
    turn.transportFailure = true;
    this.#settle(failedOutcome('connection_closed', this.#projector.turnText(turn.messageId)));
    await child.stop('crash');
  }

  #markObserved(): void {
    if (this.#turn) this.#turn.observed = true;
  }

  #settle(outcome: TurnOutcome): void {
    const turn = this.#turn;
    if (!turn) return;
    this.#turn = undefined;
    turn.resolve(outcome);
  }
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function sameModelAndEffort(a: TurnSettings, b: TurnSettings): boolean {
  return a.model === b.model && a.effort === b.effort;
}

function failedOutcome(reason: string, text: string): TurnOutcome {
  const usage: Usage = { reported: false };
  return { status: 'failed', reason, text, usage };
}

function errorReason(error: unknown): string {
  return isOneWorksError(error) ? error.code : 'internal';
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
