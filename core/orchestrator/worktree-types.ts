import type { WorktreeRecord } from '../store/index.js';
import type { CheckResult, MergeResult, WorktreeChanges } from '../worktree/index.js';
import type { SessionSummary } from './types.js';

/** `diffSession`: the session's changes against its base (`stat` leaves the patch out). */
export interface DiffSessionRequest {
  sessionId: string;
  stat?: boolean | undefined;
}

/** `mergeSession`: into the base branch, or `into`; `squash` makes one commit. */
export interface MergeSessionRequest {
  sessionId: string;
  squash?: boolean | undefined;
  into?: string | undefined;
}

/** `checkSession`: a shell command run in the session's worktree under its sandbox. */
export interface CheckSessionRequest {
  sessionId: string;
  command: string;
  timeoutMs: number;
}

export interface SessionDiff extends WorktreeChanges {
  sessionId: string;
  branch: string;
}

export interface SessionMerge extends MergeResult {
  sessionId: string;
}

export interface SessionCheck extends CheckResult {
  sessionId: string;
}

/**
 * The orchestrator's operations on worktree sessions (`run --worktree`). Every one refuses a
 * session without a worktree (`no_worktree`) and, except `diffSession`, one with a live or
 * queued turn (`session_busy`).
 */
export interface WorktreeApi {
  diffSession(request: DiffSessionRequest): Promise<SessionDiff>;
  /** Refused with `merge_conflict` or `target_dirty`, changing nothing; never a force. */
  mergeSession(request: MergeSessionRequest): Promise<SessionMerge>;
  /** Removes the worktree and the branch; the session is closed (its record and events stay). */
  discardSession(request: { sessionId: string }): Promise<SessionSummary>;
  checkSession(request: CheckSessionRequest): Promise<SessionCheck>;
}

export type { WorktreeRecord };
