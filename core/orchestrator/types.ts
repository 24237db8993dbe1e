import type { Autonomy } from '../adapter.js';
import type { RuntimeEvent, TurnOutcome } from '../events/index.js';
import type { PermissionPolicy } from '../permissions/index.js';
import type { RunStatus, SessionStatus } from '../store/index.js';

/**
 * The orchestrator's public surface: what `one-works serve` exposes over its control socket and
 * what every session-touching CLI command (and later the MCP server) calls. One orchestrator
 * owns a state directory: admission (FIFO, maxConcurrentRuns, one live turn per session),
 * workspace locks, bounded queues, request-key idempotency, steering, cancellation, per-turn
 * timeouts, crash recovery at start.
 */

export interface TurnSettings {
  model?: string | undefined;
  effort?: string | undefined;
  autonomy?: Autonomy | undefined;
}

export interface CreateSessionRequest extends TurnSettings {
  /** Idempotency key: the same key with the same arguments returns the original handle. */
  requestKey?: string | undefined;
  adapter: string;
  /** A directory; canonicalised and checked against the approved roots. */
  workspace: string;
  prompt: string;
  title?: string | undefined;
  labels?: string[] | undefined;
  /** Additions to the adapter's permission policy for this session. */
  policy?: PermissionPolicy | undefined;
}

export interface SendMessageRequest extends TurnSettings {
  requestKey?: string | undefined;
  sessionId: string;
  prompt: string;
  /** Steering: supersede this session's queued turns, interrupt the live one, then run this. */
  interrupt?: boolean | undefined;
}

/** What accepting a turn returns. */
export interface TurnHandle {
  sessionId: string;
  runId: string;
  /** Queued (waiting for admission) or already running. */
  state: 'queued' | 'running';
}

export interface SessionSummary {
  sessionId: string;
  adapter: string;
  workspace: string;
  title?: string | undefined;
  labels?: string[] | undefined;
  /** working: a live turn; idle: nothing live or queued; needs_attention / failed: see `attention`. */
  state: SessionStatus;
  queueDepth: number;
  latestRun?: { runId: string; status: RunStatus; reason?: string | undefined } | undefined;
  attention?: string[] | undefined;
}

export interface WaitResult {
  /** Sessions that settled (no live or queued turn) before the timeout. */
  settled: SessionSummary[];
  /** Sessions still working when the timeout expired (a timeout is not a failure). */
  pending: SessionSummary[];
  timedOut: boolean;
}

/** The orchestrator, as its clients see it. Errors are OneWorksErrors with stable codes. */
export interface OrchestratorApi {
  createSession(request: CreateSessionRequest): Promise<TurnHandle>;
  sendMessage(request: SendMessageRequest): Promise<TurnHandle>;
  /** Cancels the live turn (protocol interrupt, then kill after cancelGraceMs) and the queued ones. */
  cancel(sessionId: string): Promise<SessionSummary>;
  status(sessionId: string): Promise<SessionSummary>;
  list(): Promise<SessionSummary[]>;
  /** Resolves when every session has settled, or after `timeoutMs` (then `timedOut`). */
  wait(sessionIds: string[], timeoutMs: number): Promise<WaitResult>;
  /** Resolves with the outcome of one run once it is terminal. */
  waitForRun(sessionId: string, runId: string): Promise<TurnOutcome & { runStatus: RunStatus }>;
  /** Live events of a session (deltas included) from now on; returns the unsubscribe function. */
  subscribe(sessionId: string, listener: (event: RuntimeEvent) => void): () => void;
  /** Live plus queued turns across all sessions. */
  activity(): { live: number; queued: number };
}
