import type { CatalogModel } from '../../../core/catalog/index.js';
import { ERROR_CODES, OneWorksError } from '../../../core/errors.js';
import type { RuntimeEvent } from '../../../core/events/index.js';
import type {
  CheckSessionRequest,
  DiffSessionRequest,
  MergeSessionRequest,
  SessionCheck,
  SessionDiff,
  SessionMerge,
  CreateSessionRequest,
  ForkSessionRequest,
  OrchestratorInfo,
  ReadSessionRequest,
  SendMessageRequest,
  SessionDetail,
  SessionSummary,
  TurnHandle,
  UpdateSessionRequest,
  UsageReport,
  WaitResult,
} from '../../../core/orchestrator/index.js';
import type { ToolOrchestrator } from '../../../cli/mcp/tool.js';
import type { CorruptSession } from '../../../core/store/index.js';
import { AskBoard, type AnsweredAsk, type AskAnswer, type OpenAsk } from '../../../core/permissions/index.js';

/**
 * An in-memory orchestrator for tool tests: sessions are summaries the test shapes; calls are
 * recorded; `fail` makes the next call of a method throw. Turns never run: `finish` settles one.
 */
export class FakeOrchestrator implements ToolOrchestrator {
  readonly calls: Array<{ method: string; args: unknown }> = [];
  /** What `info()` reports as the default adapter (the host's `defaults.adapter`); undefined: none. */
  defaultAdapter: string | undefined;
  readonly sessions = new Map<string, SessionSummary>();
  /** What corruptSessions reports (not recorded as a call: find_sessions always asks). */
  readonly corrupt: CorruptSession[] = [];
  events: RuntimeEvent[] = [];
  /** The open asks (a real board): tests open asks on it and watch them settle. */
  readonly asks = new AskBoard();
  /** What readSession returns instead of the canned detail (e.g. core's sessionDetail over a record and log). */
  detail: ((request: ReadSessionRequest) => SessionDetail) | undefined;
  readonly #failures = new Map<string, unknown>();
  #next = 1;

  /** The next call of `method` throws `error`. */
  fail(method: keyof ToolOrchestrator, error: unknown): void {
    this.#failures.set(method, error);
  }

  /** Adds a settled session. */
  add(partial: Partial<SessionSummary> & { sessionId: string }): SessionSummary {
    const summary: SessionSummary = {
      adapter: 'droid',
      workspace: '/ws',
      createdAt: '2026-01-01T00:00:00Z',
      updatedAt: '2026-01-01T00:00:00Z',
      state: 'idle',
      queueDepth: 0,
      ...partial,
    };
    this.sessions.set(summary.sessionId, summary);
    return summary;
  }

  async createSession(request: CreateSessionRequest): Promise<TurnHandle> {
    this.#record('createSession', request);
    const sessionId = `s-${String(this.#next++).padStart(10, '0')}`;
    this.add({
      sessionId,
      workspace: request.workspace,
      title: request.title,
      labels: request.labels,
      state: 'working',
      latestRun: { runId: 'r1', status: 'running' },
    });
    return {
      sessionId,
      runId: 'r1',
      state: 'running',
      settings: { model: request.model ?? 'm-default', effort: request.effort, autonomy: request.autonomy ?? 'low' },
    };
  }

  async forkSession(request: ForkSessionRequest): Promise<TurnHandle> {
    this.#record('forkSession', request);
    const source = this.#get(request.sessionId);
    const sessionId = `s-${String(this.#next++).padStart(10, '0')}`;
    this.add({ sessionId, workspace: source.workspace, state: 'working', latestRun: { runId: 'r1', status: 'running' } });
    return {
      sessionId,
      runId: 'r1',
      state: 'running',
      settings: { model: request.model ?? 'm-default', autonomy: request.autonomy ?? 'low' },
    };
  }

  async sendMessage(request: SendMessageRequest): Promise<TurnHandle> {
    this.#record('sendMessage', request);
    const s = this.#get(request.sessionId);
    return {
      sessionId: s.sessionId,
      runId: 'r2',
      state: 'queued',
      settings: { model: request.model ?? 'm-default', autonomy: request.autonomy ?? 'low' },
    };
  }

  async cancel(sessionId: string): Promise<SessionSummary> {
    this.#record('cancel', sessionId);
    const s = this.#get(sessionId);
    return this.add({ ...s, state: 'idle', latestRun: { runId: s.latestRun?.runId ?? 'r1', status: 'interrupted' } });
  }

  async status(sessionId: string): Promise<SessionSummary> {
    this.#record('status', sessionId);
    return this.#get(sessionId);
  }

  async list(): Promise<SessionSummary[]> {
    this.#record('list', undefined);
    return [...this.sessions.values()];
  }

  async corruptSessions(): Promise<CorruptSession[]> {
    return [...this.corrupt];
  }

  async wait(sessionIds: string[], timeoutMs: number): Promise<WaitResult> {
    this.#record('wait', { sessionIds, timeoutMs });
    const all = sessionIds.map((id) => this.#get(id));
    const pending = all.filter((s) => s.state === 'working');
    return { settled: all.filter((s) => s.state !== 'working'), pending, timedOut: pending.length > 0 };
  }

  async listAsks(sessionId?: string): Promise<OpenAsk[]> {
    this.#record('listAsks', { sessionId });
    return this.asks.list(sessionId);
  }

  async answerAsk(answer: AskAnswer): Promise<AnsweredAsk> {
    this.#record('answerAsk', answer);
    return this.asks.answer(answer);
  }

  async updateSession(request: UpdateSessionRequest): Promise<SessionSummary> {
    this.#record('updateSession', request);
    const { sessionId, ...changes } = request;
    const defined = Object.fromEntries(Object.entries(changes).filter(([, v]) => v !== undefined));
    return this.add({ ...this.#get(sessionId), ...defined });
  }

  async readSession(request: ReadSessionRequest): Promise<SessionDetail> {
    this.#record('readSession', request);
    const summary = this.#get(request.sessionId);
    if (this.detail) return this.detail(request);
    return {
      summary,
      latestRun: { runId: 'r1', status: 'completed', prompt: 'hello', settings: { model: 'm-default', autonomy: 'low' }, text: 'done' },
      events: this.events,
      eventsTruncated: false,
      pendingQuestions: [],
    };
  }

  async usage(sessionIds?: string[]): Promise<UsageReport> {
    this.#record('usage', sessionIds);
    return {
      total: { reported: true, inputTokens: 10, outputTokens: 5 },
      sessions: [{ sessionId: 's-1', runs: 1, usage: { reported: true, inputTokens: 10, outputTokens: 5 } }],
    };
  }

  async info(): Promise<OrchestratorInfo> {
    this.#record('info', undefined);
    return {
      approvedRoots: ['/ws'],
      limits: { maxConcurrentRuns: 2, maxQueuedTotal: 10, maxQueuedPerSession: 3, runTimeoutMs: 600_000, cancelGraceMs: 5_000 },
      activity: { live: 1, queued: 0 },
      adapters: [{ name: 'droid', model: 'm-default', autonomy: 'low' }],
      ...(this.defaultAdapter === undefined ? {} : { defaultAdapter: this.defaultAdapter }),
    };
  }

  async models(adapter: string): Promise<CatalogModel[]> {
    this.#record('models', adapter);
    return [
      {
        id: 'm-default',
        displayName: 'Default',
        custom: true,
        deprecated: false,
        disabled: false,
        efforts: ['low', 'high'],
        defaultEffort: 'low',
      },
    ];
  }

  #record(method: string, args: unknown): void {
    this.calls.push({ method, args });
    const failure = this.#failures.get(method);
    if (failure !== undefined) {
      this.#failures.delete(method);
      throw failure;
    }
  }

  #get(sessionId: string): SessionSummary {
    const s = this.sessions.get(sessionId);
    if (!s) throw new OneWorksError(ERROR_CODES.SESSION_NOT_FOUND, `no session ${sessionId}`);
    return s;
  }

  // Worktree operations: recorded; the tests of these tools live with the real orchestrator (conformance).
  async diffSession(request: DiffSessionRequest): Promise<SessionDiff> {
    this.calls.push({ method: 'diffSession', args: request });
    return {
      sessionId: request.sessionId,
      branch: `ow/${request.sessionId}`,
      baseCommit: '0'.repeat(40),
      files: [],
      linesAdded: 0,
      linesRemoved: 0,
    };
  }

  async mergeSession(request: MergeSessionRequest): Promise<SessionMerge> {
    this.calls.push({ method: 'mergeSession', args: request });
    return {
      sessionId: request.sessionId,
      into: request.into ?? 'main',
      commit: '1'.repeat(40),
      squash: request.squash === true,
      fastForward: false,
      alreadyMerged: false,
    };
  }

  async discardSession(request: { sessionId: string }): Promise<SessionSummary> {
    this.calls.push({ method: 'discardSession', args: request });
    return this.status(request.sessionId);
  }

  async checkSession(request: CheckSessionRequest): Promise<SessionCheck> {
    this.calls.push({ method: 'checkSession', args: request });
    return {
      sessionId: request.sessionId,
      command: request.command,
      passed: true,
      exitCode: 0,
      timedOut: false,
      durationMs: 1,
      outputTail: '',
    };
  }
}
