import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import {
  type AdapterSession,
  type ChildChannel,
  type ChildExit,
  type LaunchSpec,
  PERMISSION_CHOICES,
  type PermissionAsk,
  permissionChoice,
  type SessionIO,
  type SessionSpec,
  type TurnInput,
  exitWords,
  stderrSuffix,
} from '../../core/adapter.js';
import { OneWorksError } from '../../core/errors.js';
import type { TurnOutcome, Usage } from '../../core/events/index.js';
import { type CheckpointManifest, readLatest, recordCheckpoint, restoreIfEmpty } from './checkpoint.js';
import type { HarnessConfig } from './config.js';
import { type McpTools, startMcpTools } from './mcp-tools.js';
import { type HarnessTool, prepareCall, toolDefinitions, toolsOf, type ToolOutcome } from './tools.js';
import {
  CheckpointResultSchema,
  decodeRunnerMessage,
  type EventFrame,
  MAX_CONCURRENT_TOOL_CALLS,
  MAX_LINE_BYTES,
  METHODS,
  OpenResultSchema,
  PromptResultSchema,
  type Reply,
  type Request,
  RUNNER_PROTOCOL_VERSION,
  type ToolCall,
} from './wire.js';

/** Where a session's native directory lies inside its HOME (`<home>/runner/<native id>`). */
export const RUNNER_DIR = 'runner';

/** Where One Works keeps a session's checkpoints: next to its HOME (`<session dir>/runner-checkpoints/<native id>`), out of the runner's reach. */
export const CHECKPOINT_DIR = 'runner-checkpoints';

interface Pending {
  method: string;
  resolve: (reply: Reply) => void;
  reject: (error: Error) => void;
}

interface LiveTurn {
  runId: string;
  resolve: (outcome: TurnOutcome) => void;
  interrupted: boolean;
  /** Aborted on interrupt and when the turn ends: stops tool calls still running. */
  abort: AbortController;
  messages: number;
  text: string;
  usage: { input: number; output: number } | undefined;
  openTools: number;
}

/**
 * One native session of a process runner (a harness speaking RunnerFrame, wire.ts). The child is
 * started on the first prompt, gets `open` (native directory, tool definitions, provider
 * credentials: the only way they reach it) and must answer it within `openTimeoutMs`. A prompt
 * settles on the runner's reply to it. Tool calls are validated, decided by the policy and run
 * by One Works (tools.ts). Broken framing, an unknown field, a reply to an unknown id or an exit
 * mid-turn end the turn as failed with `runner_error` and stop the child; the next prompt starts
 * a new one, which reopens the native session from its directory.
 */
export class RunnerSession implements AdapterSession {
  readonly #adapterName: string;
  readonly #config: HarnessConfig;
  readonly #spec: SessionSpec;
  readonly #io: SessionIO;
  readonly #builtins: ReadonlyMap<string, HarnessTool>;
  /** The built-in tools and, while the runner runs, those of its MCP servers. */
  #tools: ReadonlyMap<string, HarnessTool>;
  #mcp: McpTools | undefined;
  readonly #pending = new Map<string, Pending>();
  readonly #epoch = randomUUID();
  #nextId = 0;
  #attachment: string | undefined;
  #starting: Promise<void> | undefined;
  #child: ChildChannel | undefined;
  #turn: LiveTurn | undefined;
  #closing: Promise<void> | undefined;
  #broken = false;
  #launches = 0;
  #dir: string | undefined;
  #lastCheckpoint: CheckpointManifest | undefined;
  readonly info: AdapterSession['info'] = {};

  constructor(adapterName: string, config: HarnessConfig, spec: SessionSpec, io: SessionIO) {
    this.#adapterName = adapterName;
    this.#config = config;
    this.#spec = spec;
    this.#io = io;
    this.#builtins = toolsOf(config.tools);
    this.#tools = this.#builtins;
    if (spec.nativeSessionId) {
      this.info.nativeSessionId = spec.nativeSessionId;
      this.#attachment = spec.nativeSessionId;
    }
    this.info.versionFacts = { api: 'runner-frame', protocolVersion: RUNNER_PROTOCOL_VERSION };
  }

  async prompt(input: TurnInput): Promise<TurnOutcome> {
    if (this.#turn) throw new OneWorksError('session_busy', 'a turn is already running in this session');
    if (this.#closing) throw new OneWorksError('connection_closed', `${this.#adapterName}: the session is closed`);
    try {
      await this.#start();
    } catch (error) {
      await this.#stopChild('crash');
      throw error;
    }
    const settled = new Promise<TurnOutcome>((resolve) => {
      this.#turn = {
        runId: input.runId,
        resolve,
        interrupted: false,
        abort: new AbortController(),
        messages: 0,
        text: '',
        usage: undefined,
        openTools: 0,
      };
    });
    this.#request({ method: METHODS.prompt, turn: input.runId, params: { text: input.text } }, undefined).then(
      (reply) => this.#onPromptReply(input.runId, reply),
      (error: Error) => this.#failTurn(input.runId, error.message),
    );
    return settled;
  }

  async interrupt(): Promise<void> {
    const turn = this.#turn;
    if (!turn || !this.#child) return;
    turn.interrupted = true;
    turn.abort.abort();
    await this.#request({ method: METHODS.interrupt, turn: turn.runId, params: {} }, this.#config.requestTimeoutMs).catch(() => undefined);
  }

  // A `steer` frame for the live turn; the runner adds the text to the turn (its next model request).
  // False when no turn is live or the runner refused it (answered `error`, or not in time): the
  // orchestrator then interrupts the turn and runs the message as a turn of its own.
  async steer(text: string): Promise<boolean> {
    const turn = this.#turn;
    if (!turn || !this.#child || turn.interrupted) return false;
    const reply = await this.#request({ method: METHODS.steer, turn: turn.runId, params: { text } }, this.#config.requestTimeoutMs).catch(
      () => undefined,
    );
    return reply !== undefined && !('error' in reply) && this.#turn === turn;
  }

  close(): Promise<void> {
    this.#closing ??= this.#doClose();
    return this.#closing;
  }

  async ready(): Promise<boolean> {
    return (
      this.#child !== undefined && !this.#broken && !this.#closing && (await this.#starting?.then(() => true).catch(() => false)) === true
    );
  }

  agentPid(): number | undefined {
    return this.#child?.pid;
  }

  async #doClose(): Promise<void> {
    await this.#starting?.catch(() => undefined);
    if (!this.#child) return;
    // A polite detach first (the runner may flush its state), bounded; then the stop in steps.
    if (!this.#broken && !this.#turn) await this.#request({ method: METHODS.detach, params: {} }, 2_000).catch(() => undefined);
    await this.#stopChild('shutdown');
  }

  #start(): Promise<void> {
    this.#starting ??= this.#doStart();
    return this.#starting;
  }

  async #doStart(): Promise<void> {
    let resuming = true;
    if (!this.#attachment) {
      // The native id is ours to choose: durable before the child exists, so a later process reopens it.
      resuming = false;
      this.#attachment = randomUUID();
      this.info.nativeSessionId = this.#attachment;
      await this.#io.setNativeSessionId(this.#attachment);
    }
    const dir = path.join(this.#spec.home, RUNNER_DIR, this.#attachment);
    this.#dir = dir;
    // A native directory that is gone or empty (a fresh disk, a wiped HOME) is restored from the latest checkpoint.
    const restored = resuming ? await restoreIfEmpty(this.#checkpointStore(), dir) : undefined;
    if (restored) {
      this.#io.emit({
        type: 'log',
        key: `checkpoint.restored:${this.#epoch}:${this.#launches}`,
        level: 'info',
        message: `restored the runner's directory from the checkpoint of run ${restored.runId} (${restored.files.length} files)`,
      });
    }
    await mkdir(dir, { recursive: true, mode: 0o700 });
    this.#lastCheckpoint = await readLatest(this.#checkpointStore());
    // The harness's MCP servers first: their tools are part of `open`. One Works calls them; the runner never starts one.
    if (Object.keys(this.#config.mcpServers).length > 0) {
      this.#mcp = await startMcpTools(this.#adapterName, this.#config.mcpServers, this.#io, this.#spec.workspace);
      this.#tools = new Map([...this.#builtins, ...this.#mcp.tools.map((tool) => [tool.name, tool] as const)]);
    }
    const child = await this.#io.launch(this.#launchSpec(), []);
    this.#launches += 1;
    this.#child = child;
    this.#broken = false;
    child.transport.onmessage = (raw) => this.#onMessage(child, raw);
    child.transport.onerror = (error) => this.#protocolFailure(child, error.message);
    void child.exited.then((exit) => this.#onExit(child, exit));
    await child.transport.start();
    const provider = this.#config.provider;
    const reply = await this.#request(
      {
        method: METHODS.open,
        params: {
          session_id: this.#attachment,
          dir,
          config: {
            ...((this.#spec.model ?? this.#config.model) ? { model: (this.#spec.model ?? this.#config.model) as string } : {}),
            tools: [...this.#tools.keys()],
          },
          tools: toolDefinitions(this.#tools),
          provider: { ...(provider.baseUrl ? { baseUrl: provider.baseUrl } : {}), ...(provider.apiKey ? { apiKey: provider.apiKey } : {}) },
        },
      },
      this.#config.openTimeoutMs,
    );
    if ('error' in reply) {
      throw new OneWorksError(
        resuming ? 'session_load_failed' : 'peer_error',
        `${this.#adapterName} refused to open its session (${reply.error.code}): ${reply.error.message}`,
      );
    }
    const opened = OpenResultSchema.safeParse(reply.result);
    if (!opened.success) throw this.#protocolFailure(child, `invalid open result: ${opened.error.issues[0]?.message ?? 'bad shape'}`);
    this.#io.emit({
      type: 'session.started',
      key: `session.started:${this.#epoch}:${this.#launches}`,
      adapter: this.#adapterName,
      workspace: this.#spec.workspace,
      resumed: opened.data.resumed,
      versionFacts: this.info.versionFacts,
    });
  }

  #launchSpec(): LaunchSpec {
    return {
      command: this.#config.command,
      args: [...this.#config.args],
      cwd: this.#spec.workspace,
      // The allowlist (PATH, LANG, LC_ALL, TMPDIR, …) and the session HOME come from core; no credential ever goes here.
      env: { ...this.#config.env, NO_COLOR: '1' },
      secrets: this.#config.provider.apiKey ? [this.#config.provider.apiKey] : [],
      maxLineBytes: MAX_LINE_BYTES,
      // The harness's script (`node /abs/runner.mjs`): readable inside a sandbox wherever it lives.
      readOnly: this.#config.args.filter((arg) => path.isAbsolute(arg)),
    };
  }

  // Sends a request and resolves with its reply (bounded by `timeoutMs` unless undefined).
  #request(request: Omit<Request, 'attachment' | 'id'> & { turn?: string }, timeoutMs: number | undefined): Promise<Reply> {
    const child = this.#child;
    if (!child || this.#broken) return Promise.reject(new OneWorksError('connection_closed', `${this.#adapterName} is not running`));
    this.#nextId += 1;
    const id = String(this.#nextId);
    return new Promise<Reply>((resolve, reject) => {
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              this.#pending.delete(id);
              const error = new OneWorksError(
                'request_timeout',
                `${this.#adapterName} did not answer ${request.method} within ${timeoutMs} ms`,
              );
              if (request.method === METHODS.open) this.#protocolFailure(child, error.message);
              reject(error);
            }, timeoutMs);
      timer?.unref();
      this.#pending.set(id, {
        method: request.method,
        resolve: (reply) => {
          clearTimeout(timer);
          resolve(reply);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      child.transport
        .send({ attachment: this.#attachment, id, ...request })
        .catch((error: Error) => this.#pending.get(id)?.reject(new OneWorksError('connection_closed', error.message)));
    });
  }

  #onMessage(child: ChildChannel, raw: unknown): void {
    if (child !== this.#child || this.#broken) return;
    const decoded = decodeRunnerMessage(raw);
    if (!decoded.ok) {
      this.#protocolFailure(child, decoded.problem);
      return;
    }
    const { message } = decoded;
    if (message.frame.attachment !== this.#attachment) {
      this.#protocolFailure(child, `frame for unknown attachment ${JSON.stringify(message.frame.attachment)}`);
      return;
    }
    if (message.kind === 'reply') {
      const pending = this.#pending.get(message.frame.id);
      if (!pending) {
        this.#protocolFailure(child, `reply to unknown request id ${JSON.stringify(message.frame.id)}`);
        return;
      }
      this.#pending.delete(message.frame.id);
      pending.resolve(message.frame);
      return;
    }
    const turn = this.#turn;
    if (!turn || message.frame.turn !== turn.runId) {
      this.#protocolFailure(child, `${message.kind} frame for turn ${JSON.stringify(message.frame.turn)}, which is not running`);
      return;
    }
    if (message.kind === 'event') this.#onEvent(turn, message.frame);
    else void this.#onToolCall(child, turn, message.frame);
  }

  #onEvent(turn: LiveTurn, frame: EventFrame): void {
    const messageId = `${turn.runId}:${this.#epoch}:m${turn.messages}`;
    if (frame.event === 'assistant.delta') {
      this.#io.emit({ type: 'assistant.delta', key: `delta:${messageId}:${randomUUID()}`, messageId, text: frame.data.text });
      return;
    }
    turn.messages += 1;
    if (frame.data.text !== '') turn.text = frame.data.text;
    if (frame.data.usage) {
      turn.usage = {
        input: (turn.usage?.input ?? 0) + frame.data.usage.input,
        output: (turn.usage?.output ?? 0) + frame.data.usage.output,
      };
    }
    this.#io.emit({ type: 'assistant.message', key: `message:${messageId}`, messageId, text: frame.data.text });
  }

  async #onToolCall(child: ChildChannel, turn: LiveTurn, frame: ToolCall): Promise<void> {
    if (turn.openTools >= MAX_CONCURRENT_TOOL_CALLS) {
      this.#protocolFailure(child, `more than ${MAX_CONCURRENT_TOOL_CALLS} concurrent tool calls`);
      return;
    }
    turn.openTools += 1;
    const { id: toolUseId, name } = frame.params;
    const key = `${turn.runId}:${this.#epoch}:${toolUseId}`;
    const prepared = prepareCall(this.#tools, frame.params, this.#spec.workspace);
    this.#io.emit({
      type: 'tool.call',
      key: `tool.call:${key}`,
      toolUseId,
      name,
      kind: prepared.kind,
      label: prepared.ok ? prepared.asked.label : prepared.label,
      phase: 'queued',
      input: frame.params.arguments,
    });
    let outcome: ToolOutcome;
    if (!prepared.ok) outcome = { content: prepared.problem, isError: true };
    else {
      const allowed = await this.#decide(key, prepared.asked);
      if (allowed !== true) outcome = { content: `One Works denied this ${prepared.kind} tool call: ${allowed}`, isError: true };
      else if (turn.abort.signal.aborted) outcome = { content: 'interrupted before the tool ran', isError: true };
      else {
        this.#io.emit({
          type: 'tool.call',
          key: `tool.running:${key}`,
          toolUseId,
          name,
          kind: prepared.kind,
          label: prepared.asked.label,
          phase: 'running',
        });
        outcome = await prepared.run({
          workspace: this.#spec.workspace,
          exec: this.#io.exec?.bind(this.#io),
          commandTimeoutMs: this.#config.commandTimeoutMs,
          signal: turn.abort.signal,
        });
      }
    }
    turn.openTools -= 1;
    const content = this.#io.redactor.redact(outcome.content);
    this.#io.emit({
      type: 'tool.result',
      key: `tool.result:${key}`,
      toolUseId,
      isError: outcome.isError,
      output: content,
      closedBy: 'agent',
    });
    if (child !== this.#child || this.#broken) return;
    await child.transport
      .send({ attachment: this.#attachment, turn: frame.turn, id: frame.id, result: { content, is_error: outcome.isError } })
      .catch(() => undefined);
  }

  // The policy's answer: true, or the reason of a denial.
  async #decide(key: string, tool: PermissionAsk['tools'][number]): Promise<true | string> {
    const requestId = `perm:${key}`;
    const ask: PermissionAsk = { requestId, kind: 'tool', tools: [tool], options: [...PERMISSION_CHOICES] };
    this.#io.emit({
      type: 'permission.requested',
      key: `permission.requested:${requestId}`,
      requestId,
      tools: [{ toolUseId: tool.toolUseId, name: tool.name, kind: tool.kind as never, label: tool.label }],
      options: ask.options,
    });
    const decision = await this.#io
      .decide(ask)
      .catch((error: Error) => ({ decision: 'deny', by: 'policy', reason: `decision failed: ${error.message}` }) as const);
    // One Works runs the tool itself: the choice is the answer, there is no native one to map it to.
    const choice = permissionChoice(decision);
    const allow = choice !== 'deny';
    this.#io.emit({
      type: 'permission.decided',
      key: `permission.decided:${requestId}`,
      requestId,
      decision: allow ? 'allow' : 'deny',
      option: choice,
      by: decision.by,
      ...(decision.reason ? { reason: decision.reason } : {}),
      ...('channel' in decision && decision.channel ? { channel: decision.channel } : {}),
    });
    return allow ? true : (decision.reason ?? 'not allowed');
  }

  #onPromptReply(runId: string, reply: Reply): void {
    const turn = this.#turn;
    if (!turn || turn.runId !== runId) return;
    if ('error' in reply) {
      this.#io.emit({ type: 'error', key: `turn-error:${runId}:${this.#epoch}`, code: reply.error.code, message: reply.error.message });
      this.#settle(turn, turn.interrupted ? 'interrupted' : 'failed', turn.interrupted ? 'cancelled' : reply.error.code);
      return;
    }
    const result = PromptResultSchema.safeParse(reply.result);
    if (!result.success) {
      if (this.#child) this.#protocolFailure(this.#child, `invalid prompt result: ${result.error.issues[0]?.message ?? 'bad shape'}`);
      return;
    }
    const interrupted = result.data.stop_reason === 'interrupted';
    void this.#checkpointThenSettle(turn, interrupted ? 'interrupted' : 'completed', interrupted ? 'cancelled' : 'completed');
  }

  #checkpointStore(): string {
    return path.join(path.dirname(this.#spec.home), CHECKPOINT_DIR, this.#attachment as string);
  }

  // Called only once the prompt settled: the runner names its files, One Works verifies and records them.
  async #checkpointThenSettle(turn: LiveTurn, status: TurnOutcome['status'], reason: string): Promise<void> {
    try {
      const reply = await this.#request({ method: METHODS.checkpoint, params: {} }, this.#config.requestTimeoutMs);
      if ('error' in reply) throw new OneWorksError('peer_error', `checkpoint failed (${reply.error.code}): ${reply.error.message}`);
      const result = CheckpointResultSchema.safeParse(reply.result);
      if (!result.success)
        throw new OneWorksError('protocol_error', `invalid checkpoint result: ${result.error.issues[0]?.message ?? 'bad shape'}`);
      const manifest = await recordCheckpoint({
        dir: this.#dir as string,
        store: this.#checkpointStore(),
        runId: turn.runId,
        files: result.data.files,
        previous: this.#lastCheckpoint,
        hasSecret: (text) => this.#io.redactor.redact(text) !== text,
      });
      this.#lastCheckpoint = manifest;
      const bytes = manifest.files.reduce((sum, file) => sum + file.size, 0);
      this.#io.emit({
        type: 'log',
        key: `checkpoint:${turn.runId}:${this.#epoch}`,
        level: 'info',
        message: `checkpoint of run ${turn.runId}: ${manifest.files.length} files, ${bytes} bytes`,
      });
      this.#settle(turn, status, reason);
    } catch (error) {
      if (this.#turn !== turn) return;
      const message = error instanceof Error ? error.message : String(error);
      if (this.#child) this.#protocolFailure(this.#child, message);
      else this.#failTurn(turn.runId, message);
    }
  }

  #settle(turn: LiveTurn, status: TurnOutcome['status'], reason: string): void {
    if (this.#turn !== turn) return;
    this.#turn = undefined;
    turn.abort.abort();
    const usage: Usage = turn.usage
      ? { reported: true, inputTokens: turn.usage.input, outputTokens: turn.usage.output }
      : { reported: false };
    if (usage.reported) this.#io.emit({ type: 'usage', key: `usage:${turn.runId}:${this.#epoch}`, scope: 'turn', usage });
    turn.resolve({ status, reason, text: turn.text, usage });
  }

  #failTurn(runId: string, message: string): void {
    const turn = this.#turn;
    if (!turn || turn.runId !== runId) return;
    this.#io.emit({ type: 'error', key: `runner-error:${runId}:${this.#epoch}`, code: 'runner_error', message });
    this.#settle(turn, turn.interrupted ? 'interrupted' : 'failed', turn.interrupted ? 'cancelled' : 'runner_error');
  }

  // Broken framing: the turn fails with runner_error, every pending request is rejected and the child is stopped.
  #protocolFailure(child: ChildChannel, problem: string): OneWorksError {
    const error = new OneWorksError('protocol_error', `${this.#adapterName} broke the RunnerFrame protocol: ${problem}`);
    if (child !== this.#child || this.#broken) return error;
    this.#broken = true;
    const turn = this.#turn;
    if (turn) this.#failTurn(turn.runId, error.message);
    else this.#io.emit({ type: 'error', key: `runner-error:${this.#epoch}:${randomUUID()}`, code: 'runner_error', message: error.message });
    this.#rejectPending(error);
    void this.#stopChild('crash');
    return error;
  }

  #onExit(child: ChildChannel, exit: ChildExit): void {
    if (child !== this.#child) return;
    const message = `${this.#adapterName} ${exitWords(exit)}${stderrSuffix(child.stderrTail())}`;
    this.#rejectPending(new OneWorksError('process_exited', message));
    const turn = this.#turn;
    if (turn) this.#failTurn(turn.runId, `${message} before the turn ended`);
    this.#child = undefined;
    this.#starting = undefined;
    void this.#closeMcp();
  }

  // Stops the MCP servers of the runner process that is gone (the next start starts them again).
  async #closeMcp(): Promise<void> {
    const mcp = this.#mcp;
    this.#mcp = undefined;
    this.#tools = this.#builtins;
    await mcp?.close();
  }

  #rejectPending(error: Error): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const entry of pending) entry.reject(error);
  }

  async #stopChild(reason: 'shutdown' | 'crash'): Promise<void> {
    const child = this.#child;
    if (!child) {
      // A start that failed before the runner existed (an MCP server that did not start): the next prompt tries again.
      this.#starting = undefined;
      return this.#closeMcp();
    }
    try {
      await child.stop(reason);
    } finally {
      if (this.#child === child) {
        this.#child = undefined;
        this.#starting = undefined;
      }
      await this.#closeMcp();
    }
  }
}
