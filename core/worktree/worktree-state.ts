import type { WorktreeRecord } from '../store/index.js';

/** Where a worktree session's worktree stands: still there and never merged, merged at least once, or removed by `discard`. */
export type WorktreeState = 'live' | 'merged' | 'discarded';

/** The worktree facts every view shows (`sessions`, `sessions show`, MCP `session_status`). */
export interface WorktreeFacts {
  repository: string;
  path: string;
  branch: string;
  baseRef: string;
  baseCommit: string;
  state: WorktreeState;
  /** The branches it was merged into, in merge order (empty when never merged). */
  mergedInto: string[];
}

/** The state of a recorded worktree: `discarded` wins over `merged` (the worktree is gone either way). */
export function worktreeState(worktree: Pick<WorktreeRecord, 'discardedAt' | 'merges'>): WorktreeState {
  if (worktree.discardedAt !== undefined) return 'discarded';
  return (worktree.merges?.length ?? 0) > 0 ? 'merged' : 'live';
}

/** The facts of a recorded worktree that views show. */
export function worktreeFacts(worktree: WorktreeRecord): WorktreeFacts {
  const { repository, path, branch, baseRef, baseCommit } = worktree;
  return {
    repository,
    path,
    branch,
    baseRef,
    baseCommit,
    state: worktreeState(worktree),
    mergedInto: (worktree.merges ?? []).map((m) => m.into),
  };
}
