import { z } from 'zod';
import {
  ADAPTER_CONTRACT_VERSION,
  type Adapter,
  type AdapterCapabilities,
  type AdapterSession,
  type CliDescriptor,
  type PermissionAsk,
  permissionChoice,
  type PermissionDecision,
  type ResolvedCli,
  type SessionIO,
  type SessionSpec,
  type TurnInput,
  type TurnSettings,
  type VersionFacts,
} from '../../core/adapter.js';
import { ToolKindSchema, type TurnOutcome } from '../../core/events/index.js';
import type { SessionRuntime } from '../../core/session/index.js';
import { createFileStore } from '../../core/store/index.js';

/**
 * An in-memory adapter for core tests: no child process, no wire format. Each turn follows a
 * scripted step (reply text, a permission ask through `io.decide`, a turn that hangs until it is
 * interrupted, a failure, an agent that dies: `crash`); the fake records what core gave it (opens, prompts with their
 * settings, decisions, interrupts, closes) so that core/session and orchestrator tests need no
 * droid. Settings per turn: when `perTurnSettings` is set the fake takes any settings, else only
 * the ones it was opened with (the runner then restarts it).
 */

/** The CLI declaration of the fake: no package, a `fake 1.2.3` version line. */
export const FAKE_CLI: CliDescriptor = {
  adapter: 'fake',
  displayName: 'fake',
  executable: 'fake-agent',
  packages: {},
  binPath: () => 'bin/fake-agent',
  parseVersion: (line) => /^fake (\d+\.\d+\.\d+)$/.exec(line)?.[1],
  versionFacts: (version) => (version.startsWith('1.') ? { fakeVersion: version } : undefined),
};

/** The fake's check: the announced `fakeVersion` is the binary's version. */
export function checkFakeFacts(announced: VersionFacts, _expected: unknown, cliVersion: string): string[] {
  return announced.fakeVersion === cliVersion ? [] : [`fakeVersion ${announced.fakeVersion ?? '(none)'}, expected ${cliVersion}`];
}

/** A resolved CLI for runtimes built around the fake (never executed). */
export const FAKE_RESOLVED_CLI: ResolvedCli = {
  source: 'path',
  binaryPath: '/nonexistent/fake-agent',
  version: '1.0.0',
  range: '>=1.0.0 <1.1.0',
  expected: { facts: { fakeVersion: '1.0.0' }, qualifiedBy: 'table' },
};

/** What one turn does. */
export interface FakeStep {
  /** The reply (default `reply to <prompt>`). */
  text?: string;
  /** Asks this before replying; a deny ends the turn `failed` with reason `denied`. */
  ask?: Omit<PermissionAsk, 'requestId'>;
  /** Never ends by itself: waits for `interrupt()` (or `close()`), then ends `interrupted`. */
  hang?: boolean;
  /** Replies after this many ms; an interrupt (or close) before then ends the turn `interrupted`. */
  delayMs?: number;
  /** Ends `failed` with this reason. */
  fail?: string;
}

export interface FakeAdapterOptions {
  /** The step of each turn (`n` counts every prompt of this fake from 0); default: a plain reply. */
  script?: (input: TurnInput, n: number) => FakeStep;
  /** The agent takes other settings between turns without a restart. */
  perTurnSettings?: boolean;
  /**
   * The agent can be steered (capability `steering`, AdapterSession.steer): a message steered
   * into a waiting turn ends it `completed` with the text `steered by <message>`.
   */
  steering?: boolean;
  /** `start()` (prewarming) rejects with this message; a prompt still starts the agent. */
  failStart?: string;
}

/** What the fake saw, for assertions. */
export interface FakeAgentLog {
  opened: SessionSpec[];
  prompts: Array<{ sessionId: string; input: TurnInput }>;
  decisions: PermissionDecision[];
  interrupts: number;
  /** Messages steered into live turns. */
  steers: string[];
  closes: number;
  /** Liveness checks (`ready`) asked of the agents. */
  readies: number;
  /** The One Works session id of each closed agent, in close order. */
  closed: string[];
  /** Sessions opened and not closed. */
  open(): number;
}

export interface FakeAgent {
  adapter: Adapter<unknown>;
  log: FakeAgentLog;
  /**
   * The running agent of a session dies as if killed from outside: `ready` answers false, a turn
   * in progress ends `failed` (`process_exited`), and so does every later prompt to it.
   */
  crash(sessionId: string): void;
}

/** Above Linux's largest pid (2^22): a pid no real process can have, for memory accounting only. */
const FAKE_PID_BASE = 2 ** 22;

const FakeConfigSchema = z.object({ model: z.string().optional(), autonomy: z.enum(['off', 'low', 'medium', 'high']).default('low') });

/** Creates a fake adapter and its log. */
export function createFakeAdapter(options: FakeAdapterOptions = {}): FakeAgent {
  let live = 0;
  const log: FakeAgentLog = {
    opened: [],
    prompts: [],
    decisions: [],
    interrupts: 0,
    steers: [],
    closes: 0,
    readies: 0,
    closed: [],
    open: () => live,
  };
  const sessions: FakeSession[] = [];
  let turns = 0;
  const capabilities: AdapterCapabilities = {
    resume: 'respawn',
    perTurnSettings: options.perTurnSettings === true,
    steering: options.steering === true,
    titles: false,
    authoritativeCatalog: true,
    oneTurnPerProcess: false,
  };
  const adapter: Adapter<unknown> = {
    contractVersion: ADAPTER_CONTRACT_VERSION,
    name: 'fake',
    configSchema: FakeConfigSchema,
    cli: FAKE_CLI,
    checkVersionFacts: checkFakeFacts,
    capabilities,
    prepare: async () => FAKE_RESOLVED_CLI,
    open: (_config, spec, io) => {
      log.opened.push(spec);
      live += 1;
      const session = new FakeSession(spec, io, {
        step: (input) => (options.script ?? (() => ({})))(input, turns++),
        log,
        perTurnSettings: options.perTurnSettings === true,
        failStart: options.failStart,
        pid: FAKE_PID_BASE + log.opened.length,
        onClose: () => {
          live -= 1;
          log.closed.push(spec.sessionId);
        },
      });
      sessions.push(session);
      if (options.steering !== true) return session;
      return Object.assign(session, { steer: (text: string) => session.steerInto(text) });
    },
  };
  const crash = (sessionId: string): void => {
    const session = sessions.findLast((s) => s.sessionId === sessionId && s.alive);
    if (!session) throw new Error(`no live fake agent for ${sessionId}`);
    session.die();
  };
  return { adapter, log, crash };
}

interface FakeSessionDeps {
  step(input: TurnInput): FakeStep;
  log: FakeAgentLog;
  perTurnSettings: boolean;
  failStart: string | undefined;
  pid: number;
  onClose(): void;
}

class FakeSession implements AdapterSession {
  readonly info: AdapterSession['info'] = {};
  readonly #spec: SessionSpec;
  readonly #io: SessionIO;
  readonly #deps: FakeSessionDeps;
  #settings: TurnSettings;
  #interrupt: ((how: 'interrupt' | 'crash') => void) | undefined;
  #steered: ((text: string) => void) | undefined;
  #closed = false;
  #dead = false;
  #started = false;
  #asks = 0;

  constructor(spec: SessionSpec, io: SessionIO, deps: FakeSessionDeps) {
    this.#spec = spec;
    this.#io = io;
    this.#deps = deps;
    this.#settings = { model: spec.model, effort: spec.effort, autonomy: spec.autonomy };
    if (spec.nativeSessionId) this.info.nativeSessionId = spec.nativeSessionId;
  }

  get sessionId(): string {
    return this.#spec.sessionId;
  }

  /** Open and not crashed. */
  get alive(): boolean {
    return !this.#closed && !this.#dead;
  }

  die(): void {
    this.#dead = true;
    this.#interrupt?.('crash');
    this.#interrupt = undefined;
  }

  async prompt(input: TurnInput): Promise<TurnOutcome> {
    if (this.#closed || this.#dead) return { status: 'failed', reason: 'process_exited', text: '', usage: { reported: false } };
    this.#deps.log.prompts.push({ sessionId: this.#spec.sessionId, input });
    await this.#begin();
    if (input.settings) this.#settings = input.settings;
    const step = this.#deps.step(input);
    if (step.ask) {
      const requestId = `ask-${++this.#asks}`;
      this.#io.emit({
        type: 'permission.requested',
        key: `permission:${requestId}:requested`,
        requestId,
        tools: step.ask.tools.map(({ toolUseId, name, kind, label }) => ({ toolUseId, name, kind: ToolKindSchema.parse(kind), label })),
        options: step.ask.options,
      });
      const decision = await this.#io.decide({ ...step.ask, requestId });
      this.#deps.log.decisions.push(decision);
      this.#io.emit({
        type: 'permission.decided',
        key: `permission:${requestId}:decided`,
        requestId,
        decision: decision.decision,
        option: permissionChoice(decision),
        by: decision.by,
      });
      if (decision.decision === 'deny') return { status: 'failed', reason: 'denied', text: '', usage: { reported: false } };
    }
    let steeredBy: string | undefined;
    if (step.hang || step.delayMs !== undefined) {
      const ended = await new Promise<'interrupt' | 'crash' | 'done'>((resolve) => {
        this.#interrupt = resolve;
        this.#steered = (text) => {
          steeredBy = text;
          resolve('done');
        };
        if (!step.hang) setTimeout(() => resolve('done'), step.delayMs).unref();
      });
      this.#interrupt = undefined;
      this.#steered = undefined;
      if (ended === 'crash') return { status: 'failed', reason: 'process_exited', text: '', usage: { reported: false } };
      if (ended === 'interrupt') return { status: 'interrupted', reason: 'cancelled', text: '', usage: { reported: false } };
    }
    if (step.fail) return { status: 'failed', reason: step.fail, text: '', usage: { reported: false } };
    const text = steeredBy !== undefined ? `steered by ${steeredBy}` : (step.text ?? `reply to ${input.text}`);
    // Streamed first (live only, never logged), then the whole message.
    this.#io.emit({ type: 'assistant.delta', key: `delta:${input.runId}:0`, messageId: input.runId, text });
    this.#io.emit({ type: 'assistant.message', key: `message:${input.runId}`, messageId: input.runId, text });
    return { status: 'completed', reason: 'completed', text, usage: { reported: true, inputTokens: 1, outputTokens: 1 } };
  }

  // AdapterSession.steer when the fake is made with `steering`: only a waiting turn takes it.
  async steerInto(text: string): Promise<boolean> {
    const steered = this.#steered;
    if (!steered) return false;
    this.#deps.log.steers.push(text);
    steered(text);
    return true;
  }

  // Prewarming: starts the agent without a prompt (or fails as told).
  async start(): Promise<void> {
    if (this.#deps.failStart !== undefined) throw new Error(this.#deps.failStart);
    await this.#begin();
  }

  // The "handshake" of the first prompt or of start: the native id recorded, session.started.
  async #begin(): Promise<void> {
    if (this.#started) return;
    if (this.#closed || this.#dead) throw new Error('the fake agent is closed');
    this.#started = true;
    const native = this.#spec.nativeSessionId ?? `fake-${this.#spec.sessionId}`;
    this.info.nativeSessionId = native;
    this.info.versionFacts = { fakeVersion: FAKE_RESOLVED_CLI.version };
    await this.#io.setNativeSessionId(native);
    this.#io.emit({
      type: 'session.started',
      key: `session.started:${this.#deps.pid}`,
      adapter: 'fake',
      workspace: this.#spec.workspace,
      resumed: this.#spec.nativeSessionId !== undefined,
      versionFacts: this.info.versionFacts,
    });
  }

  async interrupt(): Promise<void> {
    this.#deps.log.interrupts += 1;
    this.#interrupt?.('interrupt');
    this.#interrupt = undefined;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#deps.log.closes += 1;
    this.#interrupt?.('interrupt');
    this.#deps.onClose();
  }

  // An agent is up once a turn started it, until it is closed (an in-memory agent always answers).
  async ready(_timeoutMs: number): Promise<boolean> {
    this.#deps.log.readies += 1;
    return this.#started && this.alive;
  }

  agentPid(): number | undefined {
    return this.#started && this.alive ? this.#deps.pid : undefined;
  }

  canApplySettings(settings: TurnSettings): boolean {
    if (this.#deps.perTurnSettings) return true;
    return (
      settings.model === this.#settings.model && settings.effort === this.#settings.effort && settings.autonomy === this.#settings.autonomy
    );
  }
}

/** A SessionRuntime around a fake adapter, with a file store in `stateDir`; `decide` allows everything unless given. */
export async function createFakeRuntime(
  fake: FakeAgent,
  stateDir: string,
  overrides: Partial<SessionRuntime> = {},
): Promise<SessionRuntime> {
  return {
    store: await createFileStore(stateDir),
    stateDir,
    adapter: fake.adapter,
    adapterConfig: fake.adapter.configSchema.parse({}),
    cli: FAKE_RESOLVED_CLI,
    secrets: [],
    decide: () => Promise.resolve({ decision: 'allow', by: 'policy' }),
    interruptGraceMs: 300,
    runTimeoutMs: 15_000,
    ...overrides,
  };
}
