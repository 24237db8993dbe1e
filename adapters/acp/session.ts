import { randomUUID } from 'node:crypto';
import type * as acp from '@agentclientprotocol/sdk';
import {
  type AdapterSession,
  type ChildChannel,
  type ChildExit,
  type LaunchSpec,
  PERMISSION_CHOICES,
  type PermissionAsk,
  type PermissionChoice,
  permissionChoice,
  type SeedFile,
  type SessionIO,
  type SessionSpec,
  type TurnInput,
  exitedDuringTurn,
  stderrSuffix,
} from '../../core/adapter.js';
import { OneWorksError } from '../../core/errors.js';
import type { TurnOutcome } from '../../core/events/index.js';
import { checkMcpTransports } from './mcp.js';
import { chooseOption } from './permissions.js';
import { AcpProjector, promptUsage } from './project.js';
import { transportStream, UNKNOWN_UPDATE_METHOD } from './stream.js';
import { acpPermissionTool, type CommandSource } from './tools.js';

/** The ACP protocol family: the "API" of an ACP agent's version facts. */
export const ACP_API = 'acp';

/**
 * An ACP protocol version (an integer on the wire) as One Works records protocol versions
 * (semver, so `adapters probe` and the lock file compare it like any other): 1 → `1.0.0`.
 */
export function acpProtocolVersion(version: number | string): string {
  return `${String(version)}.0.0`;
}

/** The version facts every ACP agent is held to: the ACP API at protocol version 1. */
export const ACP_FACTS: Readonly<Record<string, string>> = { api: ACP_API, protocolVersion: '1.0.0' };

/** Checks what an ACP agent announced at initialize against ACP v1. */
export function checkAcpFacts(announced: Readonly<Record<string, string>>): string[] {
  return announced.protocolVersion === ACP_FACTS.protocolVersion
    ? []
    : [`the agent speaks ACP protocol ${JSON.stringify(announced.protocolVersion ?? null)}, not ${ACP_FACTS.protocolVersion}`];
}

/**
 * What differs between ACP agents: how the agent is launched and isolated (seed files, env),
 * the native mode that leaves every decision to One Works, the auth method to use, and the
 * deadlines. Everything else is the protocol's.
 */
export interface AcpAgentProfile {
  /** The One Works adapter name (`droid-acp`, `gemini`, `acp:<name>`). */
  adapter: string;
  /** Human name of the agent in messages. */
  agent: string;
  launch(spec: SessionSpec): { launch: LaunchSpec; seed: SeedFile[] };
  /** The MCP servers given in `session/new` / `session/load` (the configured ones; droid-acp: none, its settings carry them). */
  mcpServers: acp.McpServer[];
  /**
   * The session mode under which the agent asks before every call that is not read-only, so
   * that One Works' policy decides (droid: `normal`); set with `session/set_mode` when the agent
   * offers it and another mode is current.
   */
  askingMode?: string;
  /**
   * Runs before the process that will `session/load` an earlier conversation is launched (e.g.
   * Gemini: move its chat record out of the way of the load's own fresh record).
   */
  beforeLoad?(spec: SessionSpec, nativeSessionId: string): Promise<void>;
  /** Read the prompt result's `_meta.quota.token_count` as usage when it has no `usage` (Gemini CLI). */
  metaQuotaUsage?: boolean;
  /** Where the command of an execute call is read (default `rawInput`). */
  commandSource?: CommandSource;
  /** An `authenticate` method id to call when the agent advertises it (e.g. `gemini-api-key`). */
  authMethod?: string;
  startupTimeoutMs: number;
  requestTimeoutMs: number;
}

interface LiveTurn {
  runId: string;
  interrupted: boolean;
}

/**
 * One ACP conversation in one long-lived agent process over the official SDK's
 * `ClientSideConnection`: `initialize` (no client file-system or terminal capability: One Works
 * implements neither), `session/new` for a new conversation (its id recorded before any prompt)
 * or `session/load` for one an earlier process created (only when the agent advertises
 * `loadSession`; otherwise, or when the load fails, `session_load_failed` and no new
 * conversation is started), one `session/prompt` per turn (settled by its stop reason), and
 * `session/cancel` to interrupt. Permission requests go through the policy engine.
 */
export class AcpSession implements AdapterSession {
  readonly #profile: AcpAgentProfile;
  readonly #spec: SessionSpec;
  readonly #io: SessionIO;
  readonly #projector: AcpProjector;
  readonly #epoch = randomUUID();
  #starting: Promise<void> | undefined;
  #closing: Promise<void> | undefined;
  #child: ChildChannel | undefined;
  #conn: acp.ClientSideConnection | undefined;
  #exit: ChildExit | undefined;
  #exited: Promise<ChildExit> | undefined;
  #sessionId: string | undefined;
  #loading = false;
  #turn: LiveTurn | undefined;
  readonly info: AdapterSession['info'] = {};

  constructor(profile: AcpAgentProfile, spec: SessionSpec, io: SessionIO) {
    this.#profile = profile;
    this.#spec = spec;
    this.#io = io;
    this.#projector = new AcpProjector(spec.workspace, this.#epoch, profile.commandSource);
    if (spec.nativeSessionId) this.info.nativeSessionId = spec.nativeSessionId;
  }

  agentPid(): number | undefined {
    return this.#exit ? undefined : this.#child?.pid;
  }

  async ready(timeoutMs: number): Promise<boolean> {
    void timeoutMs;
    return this.#conn !== undefined && this.#sessionId !== undefined && !this.#exit && !this.#closing;
  }

  async prompt(input: TurnInput): Promise<TurnOutcome> {
    if (this.#turn) throw new OneWorksError('session_busy', 'a turn is already running in this session');
    try {
      await this.#start();
    } catch (error) {
      await this.close();
      throw error;
    }
    if (this.#exit || !this.#conn || !this.#sessionId) {
      throw new OneWorksError('process_exited', `${this.#profile.agent} is no longer running for this session`);
    }
    const turn: LiveTurn = { runId: input.runId, interrupted: false };
    this.#turn = turn;
    this.#projector.beginTurn(input.runId);
    const prompted = this.#conn.prompt({ sessionId: this.#sessionId, prompt: [{ type: 'text', text: input.text }] });
    const exited = this.#exited!.then((exit) => ({ exit }));
    try {
      const settled = await Promise.race([prompted.then((result) => ({ result })), exited]);
      if ('exit' in settled) return this.#exitOutcome(turn, settled.exit);
      const usage = promptUsage(settled.result, { metaQuota: this.#profile.metaQuotaUsage === true });
      for (const draft of this.#projector.commitTurn()) this.#io.emit(draft);
      if (usage.reported) this.#io.emit({ type: 'usage', key: `usage:${input.runId}`, scope: 'turn', usage });
      const stop = settled.result.stopReason;
      if (stop === 'cancelled' || turn.interrupted) {
        for (const draft of this.#projector.closeOpenSpans('interrupted')) this.#io.emit(draft);
        return { status: 'interrupted', reason: 'cancelled', text: this.#projector.turnText(), usage };
      }
      return {
        status: stop === 'end_turn' ? 'completed' : 'failed',
        reason: stop === 'end_turn' ? 'completed' : stop,
        text: this.#projector.turnText(),
        usage,
      };
    } catch (error) {
      // The connection closes when the agent dies: its exit, not the closed connection, is the story.
      const exit = await Promise.race([this.#exited!, delay(EXIT_AFTER_CLOSE_MS)]);
      if (exit) return this.#exitOutcome(turn, exit);
      for (const draft of this.#projector.commitTurn()) this.#io.emit(draft);
      const message = this.#io.redactor.redact(errorText(error));
      this.#io.emit({ type: 'error', key: `prompt:${input.runId}`, code: 'peer_error', message });
      if (turn.interrupted)
        return { status: 'interrupted', reason: 'cancelled', text: this.#projector.turnText(), usage: { reported: false } };
      return { status: 'failed', reason: 'peer_error', text: this.#projector.turnText(), usage: { reported: false } };
    } finally {
      this.#turn = undefined;
      prompted.catch(() => undefined);
    }
  }

  async interrupt(): Promise<void> {
    const turn = this.#turn;
    if (!turn || !this.#conn || !this.#sessionId || this.#exit) return;
    turn.interrupted = true;
    await this.#conn.cancel({ sessionId: this.#sessionId }).catch(() => undefined);
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
    const loading = this.#spec.nativeSessionId;
    if (loading && this.#profile.beforeLoad) await this.#profile.beforeLoad(this.#spec, loading);
    const { launch, seed } = this.#profile.launch(this.#spec);
    const child = await this.#io.launch(launch, seed);
    this.#child = child;
    this.#exited = child.exited.then((exit) => {
      this.#onExit(exit);
      return exit;
    });
    child.transport.onerror = (error) =>
      this.#io.emit({ type: 'error', key: `problem:${randomUUID()}`, code: error.code, message: this.#io.redactor.redact(error.message) });
    const stream = transportStream(child.transport);
    // The ACP SDK (some 2,500 zod schemas) is loaded when an agent starts, not with the adapter.
    const { ClientSideConnection, PROTOCOL_VERSION } = await import('@agentclientprotocol/sdk');
    const conn = new ClientSideConnection(() => this.#client(), stream);
    this.#conn = conn;
    await child.transport.start();
    const early = this.#exited.then((exit) => {
      throw this.#exitError(exit);
    });
    early.catch(() => undefined);
    const deadline = <T>(what: string, work: Promise<T>, ms: number): Promise<T> =>
      Promise.race([work, early, timeout<T>(`${this.#profile.agent} did not answer ${what} within ${ms} ms`, ms)]);

    const init = await deadline(
      'initialize',
      conn.initialize({
        protocolVersion: PROTOCOL_VERSION,
        // One Works implements neither client file-system access nor terminals: it declares none.
        clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
        clientInfo: { name: 'one-works', version: '0.1.0' },
      }),
      this.#profile.startupTimeoutMs,
    );
    this.info.versionFacts = { api: ACP_API, protocolVersion: acpProtocolVersion(init.protocolVersion) };
    const method = this.#profile.authMethod;
    if (method && init.authMethods?.some((m) => m.id === method)) {
      await deadline('authenticate', conn.authenticate({ methodId: method }), this.#profile.requestTimeoutMs);
    }
    const cwd = this.#spec.workspace;
    const mcpServers = this.#profile.mcpServers;
    checkMcpTransports(this.#profile.agent, mcpServers, init.agentCapabilities?.mcpCapabilities);
    let modes: { currentModeId: string; availableModes: Array<{ id: string }> } | null | undefined;
    let configOptions: unknown;
    const resumed = this.#spec.nativeSessionId !== undefined;
    if (this.#spec.nativeSessionId) {
      const id = this.#spec.nativeSessionId;
      if (init.agentCapabilities?.loadSession !== true) {
        throw new OneWorksError(
          'session_load_failed',
          `${this.#profile.agent} cannot resume session ${id}: the agent does not offer session/load; the conversation was not replaced`,
        );
      }
      this.#loading = true;
      try {
        const loaded = await deadline('session/load', conn.loadSession({ sessionId: id, cwd, mcpServers }), this.#profile.startupTimeoutMs);
        modes = loaded?.modes;
        configOptions = (loaded as { configOptions?: unknown } | null)?.configOptions;
      } catch (error) {
        throw new OneWorksError(
          'session_load_failed',
          `${this.#profile.agent} could not load its session ${id}: ${this.#io.redactor.redact(errorText(error))}; the conversation was not replaced`,
          { cause: error },
        );
      } finally {
        this.#loading = false;
      }
      this.#sessionId = id;
    } else {
      const created = await deadline('session/new', conn.newSession({ cwd, mcpServers }), this.#profile.startupTimeoutMs);
      this.#sessionId = created.sessionId;
      this.info.nativeSessionId = created.sessionId;
      await this.#io.setNativeSessionId(created.sessionId);
      modes = created.modes;
      configOptions = (created as { configOptions?: unknown }).configOptions;
    }
    const asking = this.#profile.askingMode;
    if (asking && modes && modes.currentModeId !== asking && modes.availableModes.some((m) => m.id === asking)) {
      await deadline(
        'session/set_mode',
        conn.setSessionMode({ sessionId: this.#sessionId, modeId: asking }),
        this.#profile.requestTimeoutMs,
      );
    }
    await this.#applySettings(conn, configOptions, deadline);
    this.#io.emit({
      type: 'session.started',
      key: `session.started:${this.#epoch}`,
      adapter: this.#profile.adapter,
      workspace: cwd,
      resumed,
      cliVersion: this.#spec.cli.version,
      versionFacts: this.info.versionFacts,
    });
  }

  // The session's model and effort through `session/set_config_option`, where the agent offers
  // an option of that category and the value is one of its choices; otherwise a model warning.
  async #applySettings(
    conn: acp.ClientSideConnection,
    configOptions: unknown,
    deadline: <T>(what: string, work: Promise<T>, ms: number) => Promise<T>,
  ): Promise<void> {
    const options = Array.isArray(configOptions) ? (configOptions as ConfigOption[]) : [];
    const wanted: Array<[string, string | undefined]> = [
      ['model', this.#spec.model === 'inherit' ? undefined : this.#spec.model],
      ['thought_level', this.#spec.effort],
    ];
    for (const [category, value] of wanted) {
      if (value === undefined) continue;
      const option = options.find((o) => o.category === category || o.id === category);
      if (!option) continue;
      if (option.currentValue === value) continue;
      const values = (option.options ?? []).map((o) => o.value);
      if (!values.includes(value)) {
        this.#io.emit({
          type: 'model.warning',
          key: `setting:${this.#epoch}:${category}`,
          model: value,
          message: `${this.#profile.agent} offers no ${category} "${value}" (offered: ${values.join(', ') || 'none'}); it keeps "${String(option.currentValue)}"`,
        });
        continue;
      }
      await deadline(
        'session/set_config_option',
        conn.setSessionConfigOption({ sessionId: this.#sessionId!, configId: option.id, value } as acp.SetSessionConfigOptionRequest),
        this.#profile.requestTimeoutMs,
      );
    }
  }

  #client(): acp.Client {
    return {
      requestPermission: (params) => this.#onPermission(params),
      sessionUpdate: async (params) => {
        // A load replays the recorded conversation as updates: already in the event log.
        if (this.#loading) return;
        for (const draft of this.#projector.project(params.update as Record<string, unknown>)) this.#io.emit(draft);
      },
      // A session/update of a kind the SDK does not know (renamed by transportStream): kept as a native event.
      extNotification: async (method, params) => {
        if (method !== UNKNOWN_UPDATE_METHOD || this.#loading) return;
        const update = (params as { update?: unknown }).update;
        if (update && typeof update === 'object')
          for (const draft of this.#projector.project(update as Record<string, unknown>)) this.#io.emit(draft);
      },
    };
  }

  async #onPermission(params: acp.RequestPermissionRequest): Promise<acp.RequestPermissionResponse> {
    const requestId = `${this.#epoch}:${randomUUID()}`;
    if (!this.#turn || this.#turn.interrupted) return { outcome: { outcome: 'cancelled' } };
    const { facts, drafts } = this.#projector.sight(params.toolCall as unknown as Record<string, unknown>);
    for (const draft of drafts) this.#io.emit(draft);
    const tool = acpPermissionTool(facts, this.#spec.workspace, this.#profile.commandSource);
    // One Works' answers: allow once, allow for the session (One Works records that approval; the
    // agent still gets its allow_once option) and deny; the allows only when allow_once is offered.
    const canAllow = params.options.some((o) => o.kind === 'allow_once');
    const choices: PermissionChoice[] = canAllow ? [...PERMISSION_CHOICES] : ['deny'];
    const ask: PermissionAsk = { requestId, kind: 'tool', tools: [tool], options: choices };
    this.#io.emit({
      type: 'permission.requested',
      key: `permission.requested:${requestId}`,
      requestId,
      tools: [{ toolUseId: tool.toolUseId, name: tool.name, kind: tool.kind as never, label: tool.label }],
      options: choices,
    });
    const decision = await this.#io
      .decide(ask)
      .catch((error: Error) => ({ decision: 'deny', by: 'policy', reason: `decision failed: ${error.message}` }) as const);
    const chosen = this.#turn?.interrupted ? undefined : chooseOption(params.options, decision.decision);
    const allowed = chosen !== undefined && decision.decision === 'allow';
    this.#io.emit({
      type: 'permission.decided',
      key: `permission.decided:${requestId}`,
      requestId,
      decision: allowed ? 'allow' : 'deny',
      option: allowed ? permissionChoice(decision) : 'deny',
      nativeOption: chosen?.optionId ?? 'cancelled',
      by: decision.by,
      ...(decision.reason ? { reason: decision.reason } : {}),
      ...('channel' in decision && decision.channel ? { channel: decision.channel } : {}),
    });
    return chosen ? { outcome: { outcome: 'selected', optionId: chosen.optionId } } : { outcome: { outcome: 'cancelled' } };
  }

  #onExit(exit: ChildExit): void {
    this.#exit = exit;
    for (const draft of this.#projector.closeOpenSpans('the agent process exited before the tool finished')) this.#io.emit(draft);
  }

  #exitOutcome(turn: LiveTurn, exit: ChildExit): TurnOutcome {
    for (const draft of this.#projector.commitTurn()) this.#io.emit(draft);
    const ended = exitedDuringTurn(this.#profile.agent, exit, this.#child?.stderrTail(), {
      key: `exit:${this.#epoch}`,
      interrupted: turn.interrupted,
      text: this.#projector.turnText(),
    });
    this.#io.emit(ended.event);
    return ended.outcome;
  }

  #exitError(exit: ChildExit): OneWorksError {
    const detail = `${this.#profile.agent} exited (${exit.signal ?? exit.exitCode}) during start${stderrSuffix(this.#child?.stderrTail())}`;
    if (this.#spec.nativeSessionId) {
      return new OneWorksError(
        'session_load_failed',
        `${this.#profile.agent} could not load its session ${this.#spec.nativeSessionId}: ${detail}; the conversation was not replaced`,
      );
    }
    return new OneWorksError('process_exited', detail);
  }
}

/** How long a failed prompt waits for the agent's exit to be observed before it reports the error itself. */
const EXIT_AFTER_CLOSE_MS = 2_000;

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms).unref());
}

interface ConfigOption {
  id: string;
  category?: string;
  currentValue?: unknown;
  options?: Array<{ value: string }>;
}

function timeout<T>(message: string, ms: number): Promise<T> {
  return new Promise<T>((_, reject) => {
    const timer = setTimeout(() => reject(new OneWorksError('request_timeout', message)), ms);
    timer.unref();
  });
}

// An SDK RequestError carries the agent's JSON-RPC error; anything else its message.
function errorText(error: unknown): string {
  if (error && typeof error === 'object') {
    const e = error as { message?: unknown; data?: unknown };
    const data = e.data === undefined ? '' : ` (${typeof e.data === 'string' ? e.data : JSON.stringify(e.data)})`;
    if (typeof e.message === 'string') return `${e.message}${data}`;
    return JSON.stringify(error);
  }
  return String(error);
}
