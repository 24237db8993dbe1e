import { randomUUID } from 'node:crypto';
import {
  type AdapterSession,
  type ChildChannel,
  type ChildExit,
  PERMISSION_CHOICES,
  type PermissionAsk,
  type PermissionChoice,
  permissionChoice,
  type SessionIO,
  type SessionSpec,
  type TurnInput,
  type TurnSettings,
  exitedDuringTurn,
  stderrSuffix,
} from '../../core/adapter.js';
import { OneWorksError } from '../../core/errors.js';
import type { TurnOutcome } from '../../core/events/index.js';
import type { ClaudeConfig } from './config.js';
import { describeClaudeLaunch } from './launch.js';
import { ClaudeProjector, resultStatus, resultUsage } from './project.js';
import { describeClaudeTool } from './tools.js';
import {
  type CanUseTool,
  CanUseToolSchema,
  CONTROL,
  controlRequest,
  controlSuccess,
  type ResultMessage,
  type StdoutMessage,
  StdoutMessageSchema,
  userMessage,
} from './wire.js';

interface LiveTurn {
  resolve: (outcome: TurnOutcome) => void;
  reject: (error: Error) => void;
  interrupted: boolean;
}

interface PendingControl {
  resolve: (response: unknown) => void;
  reject: (error: Error) => void;
}

/**
 * One Claude Code conversation in one long-lived `claude -p` stream-json process, many turns.
 * A new session gets a pre-assigned `--session-id`, recorded durably before the child starts;
 * a later process resumes it with `--resume`. A resume the CLI cannot honour fails the turn
 * with `session_load_failed` and never starts a fresh conversation. A turn settles on the
 * `result` message, or as failed when the child goes away first.
 */
export class ClaudeSession implements AdapterSession {
  readonly #config: ClaudeConfig;
  readonly #spec: SessionSpec;
  readonly #io: SessionIO;
  readonly #projector: ClaudeProjector;
  readonly #controls = new Map<string, PendingControl>();
  readonly #epoch = randomUUID();
  #nextControl = 0;
  #starting: Promise<void> | undefined;
  #child: ChildChannel | undefined;
  #turn: LiveTurn | undefined;
  #closing: Promise<void> | undefined;
  #exit: ChildExit | undefined;
  #resuming = false;
  #confirmed = false;
  // The model and effort the running claude uses: its launch flags, then `set_model` answers.
  #applied: { model: string | undefined; effort: string | undefined };
  #settingsChanges = 0;
  readonly info: AdapterSession['info'] = {};

  constructor(config: ClaudeConfig, spec: SessionSpec, io: SessionIO) {
    this.#config = config;
    this.#spec = spec;
    this.#io = io;
    this.#projector = new ClaudeProjector(spec.workspace);
    this.#applied = { model: chosenModel(spec.model), effort: spec.effort };
    if (spec.nativeSessionId) this.info.nativeSessionId = spec.nativeSessionId;
  }

  async prompt(input: TurnInput): Promise<TurnOutcome> {
    if (this.#turn) throw new OneWorksError('session_busy', 'a turn is already running in this session');
    // The first turn starts claude with its own settings.
    if (!this.#starting && input.settings) this.#applied = { model: chosenModel(input.settings.model), effort: input.settings.effort };
    try {
      await this.#start();
    } catch (error) {
      await this.close();
      throw error;
    }
    if (this.#exit) throw new OneWorksError('process_exited', 'claude is no longer running for this session');
    if (input.settings) await this.#applyModel(chosenModel(input.settings.model));
    this.#projector.beginTurn();
    const settled = new Promise<TurnOutcome>((resolve, reject) => {
      this.#turn = { resolve, reject, interrupted: false };
    });
    void input.runId;
    await this.#child!.transport.send(userMessage(input.text));
    return settled;
  }

  /**
   * 2.1.333 changes the model of a running process (`set_model`); effort is a launch flag
   * (`--effort`), and going back to the CLI's own default model needs a new process too.
   * Autonomy is a policy rule only (claude always runs in permission mode `default`).
   */
  canApplySettings(settings: TurnSettings): boolean {
    const model = chosenModel(settings.model);
    return settings.effort === this.#applied.effort && (model !== undefined || this.#applied.model === undefined);
  }

  /**
   * True when a claude started by an earlier turn still runs and answers a cheap control
   * request (`get_settings`) within `timeoutMs`; false otherwise, never a rejection.
   */
  async ready(timeoutMs: number): Promise<boolean> {
    if (!this.#starting || this.#closing || this.#exit || this.#turn) return false;
    try {
      await this.#starting;
      await this.#control({ subtype: CONTROL.getSettings }, timeoutMs);
      return !this.#exit;
    } catch {
      return false;
    }
  }

  agentPid(): number | undefined {
    return this.#child && !this.#exit ? this.#child.pid : undefined;
  }

  // Switches the running claude to `model` before a turn (no restart); a refusal fails the turn.
  async #applyModel(model: string | undefined): Promise<void> {
    if (model === undefined || model === this.#applied.model) return;
    try {
      await this.#control({ subtype: CONTROL.setModel, model }, this.#config.requestTimeoutMs);
    } catch (error) {
      const why = error instanceof Error ? error.message : String(error);
      throw new OneWorksError('model_unavailable', `claude did not switch to model ${model}: ${why}`, { cause: error });
    }
    this.#applied = { ...this.#applied, model };
    this.#settingsChanges += 1;
    this.#io.emit({ type: 'settings.changed', key: `settings.changed:${this.#epoch}:${this.#settingsChanges}`, settings: { model } });
  }

  async interrupt(): Promise<void> {
    if (!this.#child || this.#exit || !this.#turn) return;
    this.#turn.interrupted = true;
    await this.#control({ subtype: CONTROL.interrupt }, this.#config.interruptGraceMs);
  }

  close(): Promise<void> {
    this.#closing ??= this.#doClose();
    return this.#closing;
  }

  async #doClose(): Promise<void> {
    await this.#starting?.catch(() => undefined);
    if (this.#child && !this.#exit) await this.#child.stop('shutdown');
  }

  #start(): Promise<void> {
    this.#starting ??= this.#doStart();
    return this.#starting;
  }

  async #doStart(): Promise<void> {
    let session: { mode: 'new' | 'resume'; id: string };
    if (this.#spec.nativeSessionId) {
      session = { mode: 'resume', id: this.#spec.nativeSessionId };
      this.#resuming = true;
    } else {
      // The native id is ours to choose: durable before the child exists, so a crash can always resume it.
      session = { mode: 'new', id: randomUUID() };
      this.info.nativeSessionId = session.id;
      await this.#io.setNativeSessionId(session.id);
    }
    const launch = describeClaudeLaunch(this.#config, this.#spec.cli, {
      cwd: this.#spec.workspace,
      home: this.#spec.home,
      session,
      model: this.#applied.model,
      effort: this.#applied.effort,
      hostEnv: process.env,
    });
    const child = await this.#io.launch(launch, []);
    this.#child = child;
    child.transport.onmessage = (message) => this.#onMessage(message);
    child.transport.onerror = (error) =>
      this.#io.emit({ type: 'error', key: `problem:${randomUUID()}`, code: error.code, message: error.message });
    const exited = child.exited.then((exit) => {
      this.#onExit(exit);
      return exit;
    });
    await child.transport.start();
    const init = this.#control({ subtype: CONTROL.initialize }, this.#config.startupTimeoutMs);
    const early = exited.then((exit) => {
      throw this.#exitError(exit, 'before it answered initialize');
    });
    early.catch(() => undefined);
    await Promise.race([init, early]);
  }

  // Sends a control request and waits for its control_response (bounded).
  #control(request: Record<string, unknown>, timeoutMs: number): Promise<unknown> {
    const child = this.#child;
    if (!child || this.#exit) return Promise.reject(new OneWorksError('connection_closed', 'claude is not running'));
    this.#nextControl += 1;
    const id = `ow-${this.#nextControl}`;
    return new Promise<unknown>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#controls.delete(id);
        reject(new OneWorksError('request_timeout', `claude did not answer ${String(request.subtype)} within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      this.#controls.set(id, {
        resolve: (value) => {
          clearTimeout(timer);
          resolve(value);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      child.transport.send(controlRequest(id, request)).catch((error: Error) => this.#controls.get(id)?.reject(error));
    });
  }

  #onMessage(raw: unknown): void {
    const parsed = StdoutMessageSchema.safeParse(raw);
    if (!parsed.success) {
      const type = typeof (raw as { type?: unknown })?.type === 'string' ? (raw as { type: string }).type : 'unknown';
      this.#io.emit({ type: 'native', key: `native:${this.#epoch}:${randomUUID()}`, nativeType: type, payload: raw });
      return;
    }
    const message = parsed.data;
    if (message.type === 'control_response') {
      this.#onControlResponse(message);
      return;
    }
    if (message.type === 'control_request') {
      void this.#onControlRequest(message.request_id, message.request);
      return;
    }
    if (message.type === 'system' && message.subtype === 'init') this.#onInit(message);
    for (const draft of this.#projector.project(message)) this.#io.emit(draft);
    if (message.type === 'result') this.#onResult(message);
  }

  #onInit(message: Extract<StdoutMessage, { type: 'system' }>): void {
    if (this.#confirmed) return;
    this.#confirmed = true;
    if (message.session_id && message.session_id !== this.info.nativeSessionId) {
      this.#io.emit({
        type: 'log',
        key: `session-id:${this.#epoch}`,
        level: 'warn',
        message: `claude reports session ${message.session_id}, expected ${this.info.nativeSessionId}`,
      });
    }
    this.info.versionFacts = { claudeCodeVersion: message.claude_code_version ?? this.#spec.cli.version };
    this.#io.emit({
      type: 'session.started',
      key: `session.started:${this.#epoch}`,
      adapter: 'claude-code',
      workspace: this.#spec.workspace,
      resumed: this.#resuming,
      cliVersion: this.#spec.cli.version,
      versionFacts: this.info.versionFacts,
    });
  }

  #onControlResponse(message: Extract<StdoutMessage, { type: 'control_response' }>): void {
    const pending = this.#controls.get(message.response.request_id);
    if (!pending) return;
    this.#controls.delete(message.response.request_id);
    if (message.response.subtype === 'success') pending.resolve(message.response.response);
    else pending.reject(new OneWorksError('protocol_error', `claude refused a control request: ${message.response.error ?? 'error'}`));
  }

  async #onControlRequest(requestId: string, request: { subtype: string }): Promise<void> {
    const child = this.#child!;
    if (request.subtype !== CONTROL.canUseTool) {
      await child.transport
        .send({ type: 'control_response', response: { subtype: 'error', request_id: requestId, error: `unsupported: ${request.subtype}` } })
        .catch(() => undefined);
      return;
    }
    const ask = CanUseToolSchema.parse(request);
    const tool = describeClaudeTool(ask.tool_name, ask.input, ask.tool_use_id ?? requestId, this.#spec.workspace);
    const permission: PermissionAsk = { requestId, kind: 'tool', tools: [tool], options: [...PERMISSION_CHOICES] };
    this.#io.emit({
      type: 'permission.requested',
      key: `permission.requested:${requestId}`,
      requestId,
      tools: [{ toolUseId: tool.toolUseId, name: tool.name, kind: tool.kind as never, label: tool.label }],
      options: permission.options,
    });
    const decision = await this.#io
      .decide(permission)
      .catch((error: Error) => ({ decision: 'deny', by: 'policy', reason: `decision failed: ${error.message}` }) as const);
    const choice = permissionChoice(decision);
    const answer = claudeAnswer(choice, ask, `One Works denied this ${tool.kind} tool: ${decision.reason ?? 'not allowed'}`);
    this.#io.emit({
      type: 'permission.decided',
      key: `permission.decided:${requestId}`,
      requestId,
      decision: choice === 'deny' ? 'deny' : 'allow',
      option: choice,
      nativeOption: answer.behavior,
      by: decision.by,
      ...(decision.reason ? { reason: decision.reason } : {}),
      ...('channel' in decision && decision.channel ? { channel: decision.channel } : {}),
    });
    await child.transport.send(controlSuccess(requestId, answer)).catch(() => undefined);
  }

  #onResult(result: ResultMessage): void {
    const turn = this.#turn;
    if (!turn) return;
    if (this.#resuming && !this.#confirmed && result.is_error) {
      this.#turn = undefined;
      turn.reject(this.#loadError(result.errors?.map(String).join('; ')));
      return;
    }
    const usage = resultUsage(result);
    if (usage.reported)
      this.#io.emit({ type: 'usage', key: `usage:${this.#epoch}:${result.session_id ?? ''}:${randomUUID()}`, scope: 'turn', usage });
    const { status, reason } = resultStatus(result, turn.interrupted);
    if (status === 'interrupted') for (const draft of this.#projector.closeOpenSpans('interrupted')) this.#io.emit(draft);
    this.#turn = undefined;
    const text =
      status === 'completed' && typeof result.result === 'string' && result.result !== '' ? result.result : this.#projector.turnText();
    turn.resolve({ status, reason, text, usage });
  }

  #onExit(exit: ChildExit): void {
    this.#exit = exit;
    for (const pending of this.#controls.values()) pending.reject(this.#exitError(exit, 'before it answered'));
    this.#controls.clear();
    for (const draft of this.#projector.closeOpenSpans('the agent process exited before the tool finished')) this.#io.emit(draft);
    const turn = this.#turn;
    if (!turn) return;
    this.#turn = undefined;
    if (this.#resuming && !this.#confirmed) {
      turn.reject(this.#loadError());
      return;
    }
    const ended = exitedDuringTurn('claude', exit, this.#child?.stderrTail(), {
      key: `exit:${this.#epoch}`,
      interrupted: turn.interrupted,
      text: this.#projector.turnText(),
    });
    this.#io.emit(ended.event);
    turn.resolve(ended.outcome);
  }

  #exitError(exit: ChildExit, when: string): OneWorksError {
    if (this.#resuming) return this.#loadError();
    return new OneWorksError(
      'process_exited',
      `claude exited (${exit.signal ?? exit.exitCode}) ${when}${stderrSuffix(this.#child?.stderrTail())}`,
    );
  }

  #loadError(detail?: string): OneWorksError {
    const tail = this.#child?.stderrTail().trim();
    const why = detail || tail || 'the CLI ended the resumed session';
    return new OneWorksError(
      'session_load_failed',
      `claude could not resume its session ${this.#spec.nativeSessionId}: ${why.slice(-500)}; the conversation was not replaced`,
    );
  }
}

// A turn's model as claude takes it: `inherit` (the YAML default) and no model both mean the CLI's own.
function chosenModel(model: string | undefined): string | undefined {
  return model === undefined || model === 'inherit' ? undefined : model;
}

/**
 * The One Works answer as Claude Code's `can_use_tool` response: both allows → `allow` with the
 * input unchanged, `deny` → `deny` with a message. "For the session" is never handed to Claude
 * (its `permission_suggestions` as session rules would let it run later calls without asking,
 * past deny rules and the record): One Works keeps the approval itself, and its policy answers
 * the next identical ask without a person, as for droid (`proceed_once`) and Codex (`accept`).
 */
export function claudeAnswer(
  choice: PermissionChoice,
  ask: CanUseTool,
  denyMessage: string,
): { behavior: 'allow'; updatedInput: Record<string, unknown> } | { behavior: 'deny'; message: string } {
  return choice === 'deny' ? { behavior: 'deny', message: denyMessage } : { behavior: 'allow', updatedInput: ask.input };
}
