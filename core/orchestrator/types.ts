import type { Autonomy } from '../adapter.js';
import type { CatalogModel } from '../catalog/index.js';
import type { RuntimeEvent, TurnOutcome, Usage } from '../events/index.js';
import type { AnsweredAsk, AskAnswer, OpenAsk, PermissionPolicy } from '../permissions/index.js';
import type { PresentationEnv } from '../process/index.js';
import type { ReconcileRequest } from '../session/index.js';
import type { CorruptSession, RunStatus, SessionStatus } from '../store/index.js';
import type { EffectiveSettings, TurnHandle } from './turn-handle-schema.js';
import type { WorktreeFacts, WorktreeRequest } from '../worktree/index.js';

export type { EffectiveSettings, TurnHandle } from './turn-handle-schema.js';

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
  /**
   * Fork: the new session's first turn carries this session's history (up to `runId`, default
   * all) as a transcript before `prompt`. Same adapter and workspace as the source.
   */
  forkOf?: { sessionId: string; runId?: string | undefined } | undefined;
  /** The client's presentation variables (TERM, COLORTERM, NO_COLOR): the agent started for this turn gets them. */
  presentation?: PresentationEnv | undefined;
  /**
   * Run in a git worktree of the workspace's repository (see WorktreeApi); `false`: in the
   * workspace itself; left out: as the workspace's approved root (or `workspaces.isolation`) says.
   */
  worktree?: WorktreeRequest | false | undefined;
}

export interface SendMessageRequest extends TurnSettings {
  requestKey?: string | undefined;
  sessionId: string;
  prompt: string;
  /** Steering: supersede this session's queued turns, interrupt the live one, then run this. */
  interrupt?: boolean | undefined;
  /** As in {@link CreateSessionRequest}; not part of the request key's arguments. */
  presentation?: PresentationEnv | undefined;
  /** Additions to the session's permission policy (`send --allow/--deny`), kept for its later turns. */
  policy?: PermissionPolicy | undefined;
}

/** `forkSession`: a new session whose first turn carries another session's history. */
export interface ForkSessionRequest extends TurnSettings {
  requestKey?: string | undefined;
  /** The source session. */
  sessionId: string;
  /** The last run whose history the fork carries (default: all of it). */
  runId?: string | undefined;
  /** What to ask after the transcript; empty: the agent is asked to continue. */
  prompt: string;
  title?: string | undefined;
}

/** Metadata changes; absent fields stay as they are. Labels replace the whole set. */
export interface UpdateSessionRequest {
  sessionId: string;
  title?: string | undefined;
  labels?: string[] | undefined;
  archived?: boolean | undefined;
}

/** Bounds of {@link OrchestratorApi.readSession}: the most recent events, newest last. */
export interface ReadSessionRequest {
  sessionId: string;
  /** At most this many events (1–200, default 50). Deltas are never included. */
  maxEvents?: number | undefined;
  /** At most this many bytes of serialized events (default and max 256 KiB); older ones are dropped first. */
  maxBytes?: number | undefined;
}

export interface RunView {
  runId: string;
  status: RunStatus;
  reason?: string | undefined;
  prompt: string;
  settings: EffectiveSettings;
  startedAt?: string | undefined;
  endedAt?: string | undefined;
  /** The committed assistant text. */
  text?: string | undefined;
  usage?: Usage | undefined;
  /** How the agent ran the turn, when its adapter has more than one way (droid: `stream-jsonrpc` or `oneshot`). */
  mode?: string | undefined;
}

export interface SessionDetail {
  summary: SessionSummary;
  latestRun?: RunView | undefined;
  /** Recent persisted events (redacted), oldest first, within the request's bounds. */
  events: RuntimeEvent[];
  /** True when older events exist that were left out. */
  eventsTruncated: boolean;
  /** Questions the agent asked that nobody answered (e.g. permission asks declined for want of a person). */
  pendingQuestions: string[];
}

export interface UsageReport {
  /** Summed over the runs that reported usage. */
  total: Usage;
  sessions: Array<{ sessionId: string; runs: number; usage: Usage }>;
}

/** What the orchestrator runs under: for clients choosing a workspace or a model. */
export interface OrchestratorInfo {
  approvedRoots: string[];
  limits: { maxConcurrentRuns: number; maxQueuedTotal: number; maxQueuedPerSession: number; runTimeoutMs: number; cancelGraceMs: number };
  activity: { live: number; queued: number };
  /** Configured adapters and the defaults a new session of each starts with. */
  adapters: Array<{ name: string; model?: string | undefined; effort?: string | undefined; autonomy: Autonomy }>;
  /** The adapter a request that names none should use (the host's `defaults.adapter`), when the host set one. */
  defaultAdapter?: string | undefined;
}

export interface SessionSummary {
  sessionId: string;
  adapter: string;
  workspace: string;
  title?: string | undefined;
  labels?: string[] | undefined;
  archived?: boolean | undefined;
  /** Read from an agent CLI's own records by `one-works import`. */
  imported?: boolean | undefined;
  createdAt: string;
  updatedAt: string;
  /** working: a live turn; idle: nothing live or queued; needs_attention / failed: see `attention`. */
  state: SessionStatus;
  queueDepth: number;
  /** `mode`: how the agent ran it, when its adapter has more than one way (droid: `stream-jsonrpc` or `oneshot`). */
  latestRun?: { runId: string; status: RunStatus; reason?: string | undefined; mode?: string | undefined } | undefined;
  attention?: string[] | undefined;
  /**
   * A worktree session's git facts (`run --worktree`): where, on which branch from which base,
   * and its state (live, merged, discarded). `discarded` repeats `state === 'discarded'` for
   * older clients.
   */
  worktree?: (WorktreeFacts & { discarded: boolean }) | undefined;
}

export interface WaitResult {
  /** Sessions that settled (no live or queued turn) before the timeout. */
  settled: SessionSummary[];
  /** Sessions still working when the timeout expired (a timeout is not a failure). */
  pending: SessionSummary[];
  timedOut: boolean;
}

/** One record file of an agent CLI to import (`one-works import`), read by the client. */
export interface ImportSessionRequest {
  adapter: string;
  /** The file's canonical path (recorded as the source; never opened by the orchestrator). */
  sourcePath: string;
  content: string;
}

export interface ImportSessionResult {
  sessionId: string;
  /** imported: a new session; updated: new history added to an earlier import; unchanged: nothing new. */
  status: 'imported' | 'updated' | 'unchanged';
  addedEvents: number;
}

/** The orchestrator, as its clients see it. Errors are OneWorksErrors with stable codes. */
export interface OrchestratorApi {
  createSession(request: CreateSessionRequest): Promise<TurnHandle>;
  sendMessage(request: SendMessageRequest): Promise<TurnHandle>;
  /**
   * A new top-level session in the source's workspace, with its adapter, labels and policy, whose
   * first turn carries the source's history up to `runId` as a bounded, redacted transcript. No
   * native fork is claimed. `session_not_found`, or `usage` for a run the source does not have.
   */
  forkSession(request: ForkSessionRequest): Promise<TurnHandle>;
  /**
   * Cancels the live turn (protocol interrupt, then kill after cancelGraceMs) and the queued ones;
   * with `runId`, only that run (queued: dropped as `cancelled`; live: cancelled as above; already
   * over: nothing). Resolves once what was cancelled is cleaned up.
   */
  cancel(sessionId: string, runId?: string): Promise<SessionSummary>;
  status(sessionId: string): Promise<SessionSummary>;
  /** Every readable session, archived ones included (callers filter on `archived`). */
  list(): Promise<SessionSummary[]>;
  /** Sessions whose record is malformed, with what is wrong (they are left out of every other call). */
  corruptSessions(): Promise<CorruptSession[]>;
  /**
   * Records a person's verdict on a run whose outcome is unknown (`completed`, `failed` or
   * `interrupted`, reason `reconciled`) with a `run.reconciled` event; the session can continue
   * once nothing else needs attention. Throws `usage` for a run that is not unknown.
   */
  reconcileRun(request: ReconcileRequest): Promise<SessionSummary>;
  /** Resolves when every session has settled, or after `timeoutMs` (then `timedOut`). */
  wait(sessionIds: string[], timeoutMs: number): Promise<WaitResult>;
  /** Resolves with the outcome of one run once it is terminal. */
  waitForRun(sessionId: string, runId: string): Promise<TurnOutcome & { runStatus: RunStatus }>;
  /** Live events of a session (deltas included) from now on; returns the unsubscribe function. */
  subscribe(sessionId: string, listener: (event: RuntimeEvent) => void): () => void;
  /** Live plus queued turns across all sessions. */
  activity(): { live: number; queued: number };
  /** Title, labels, archive flag; persisted in the session record. */
  updateSession(request: UpdateSessionRequest): Promise<SessionSummary>;
  /** Escalated asks waiting for an answer, oldest first; only that session's when given (`session_not_found` for an unknown one). */
  listAsks(sessionId?: string): Promise<OpenAsk[]>;
  /**
   * Answers an open ask as a person, through `answer.channel`. The first answer wins: a later
   * one fails with `ask_already_answered` naming who answered; an unknown id `ask_not_found`.
   */
  answerAsk(answer: AskAnswer): Promise<AnsweredAsk>;
  /**
   * A person says the session no longer needs attention: clears its notes, makes it idle and
   * records an `attention.resolved` event (with `note`). `usage` when it does not need attention.
   */
  resolveAttention(sessionId: string, note?: string): Promise<SessionSummary>;
  /** Latest run, recent events (bounded), attention reasons, pending questions. */
  readSession(request: ReadSessionRequest): Promise<SessionDetail>;
  /** Token usage of the given sessions (all when omitted). */
  usage(sessionIds?: string[]): Promise<UsageReport>;
  /** Approved roots, limits, activity, adapter defaults. */
  info(): Promise<OrchestratorInfo>;
  /** The live catalog's models of an adapter (TTL-cached), as acceptance checks them. */
  models(adapter: string): Promise<CatalogModel[]>;
  /** Imports one of an agent CLI's own session record files (all or nothing; `import_refused`). */
  importSession(request: ImportSessionRequest): Promise<ImportSessionResult>;
}
