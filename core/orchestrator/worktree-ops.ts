import { ERROR_CODES, OneWorksError } from '../errors.js';
import type { SessionRecord, WorktreeRecord } from '../store/index.js';
import { checkApproved, canonicalWorkspace, isolationFor } from '../workspace/index.js';
import {
  createWorktree,
  discardWorktree,
  mergeWorktree,
  repositoryRoot,
  runCheck,
  worktreeDiff,
  type GitOptions,
  type WorktreeRequest,
} from '../worktree/index.js';
import type { OrchestratorContext } from './orchestrator-context.js';
import type { OrchestratorDeps } from './orchestrator-deps.js';
import type { SessionSlot } from './session-slot.js';
import type { CheckSessionRequest, MergeSessionRequest, SessionCheck, SessionDiff, SessionMerge } from './worktree-types.js';

/**
 * Worktree sessions in the orchestrator: approval of the repository root and creation of the
 * worktree when a session is created with `worktree`, and diff, merge, discard and check of
 * such a session. git runs through core/worktree (argv, allowlisted environment, no hooks
 * unless `deps.worktrees.hooks`).
 */

/** How git and checks run for this orchestrator. */
export function gitOptions(deps: OrchestratorDeps): GitOptions {
  return { parentEnv: deps.worktrees?.parentEnv ?? process.env, hooks: deps.worktrees?.hooks === true };
}

/**
 * The canonical workspace of a new session and its worktree request. `worktree` left out takes
 * the isolation configured for the workspace's approved root (`deps.isolation`); `false` never
 * makes a worktree. With a worktree, the repository root that contains the workspace must lie
 * inside an approved root (the worktree itself lives in the state directory); returns that root too.
 */
export async function approveWorkspace(
  deps: OrchestratorDeps,
  workspace: string,
  requested: WorktreeRequest | false | undefined,
): Promise<{ workspace: string; repository?: string; worktree?: WorktreeRequest }> {
  // The workspace's real path is asked once, for its isolation and for its approval (on the path of
  // every new session to its agent's spawn). Unawaited when a failure comes first: the same error.
  const real = canonicalWorkspace(workspace);
  real.catch(() => undefined);
  const worktree =
    requested === undefined && deps.isolation && (await isolationFor(await real, deps.isolation)) === 'worktree' ? {} : requested;
  if (!worktree) return { workspace: await checkApproved(workspace, deps.approvedRoots, deps.approvalSource, real) };
  const canonical = await real;
  const repository = await checkApproved(await repositoryRoot(gitOptions(deps), canonical), deps.approvedRoots, deps.approvalSource);
  return { workspace: canonical, repository, worktree };
}

/** Creates the worktree of a new session and returns its record fields (workspace inside the worktree). */
export async function makeWorktree(
  deps: OrchestratorDeps,
  sessionId: string,
  approved: { workspace: string; repository?: string },
  request: WorktreeRequest,
): Promise<{ workspace: string; worktree: WorktreeRecord }> {
  return createWorktree(gitOptions(deps), {
    stateDir: deps.stateDir,
    sessionId,
    workspace: approved.workspace,
    repository: approved.repository!,
    request,
  });
}

/** Removes a worktree made for a session whose first turn was then refused. */
export async function undoWorktree(deps: OrchestratorDeps, worktree: WorktreeRecord): Promise<void> {
  await discardWorktree(gitOptions(deps), deps.stateDir, worktree).catch(() => undefined);
}

/** Throws `no_worktree` when a send targets a session whose worktree was discarded. */
export function assertWorktreePresent(record: SessionRecord): void {
  if (record.worktree?.discardedAt !== undefined) {
    throw new OneWorksError(ERROR_CODES.NO_WORKTREE, `session ${record.id}: its worktree was discarded; start a new session`);
  }
}

export async function diffSession(ctx: OrchestratorContext, slot: SessionSlot, stat: boolean): Promise<SessionDiff> {
  const worktree = liveWorktree(slot.book.record);
  const changes = await worktreeDiff(gitOptions(ctx.deps), worktree, { stat });
  return { sessionId: slot.id, branch: worktree.branch, ...changes };
}

export async function mergeSession(ctx: OrchestratorContext, slot: SessionSlot, request: MergeSessionRequest): Promise<SessionMerge> {
  const worktree = liveWorktree(slot.book.record);
  assertIdle(slot, 'merge');
  if (request.into === worktree.branch) {
    throw new OneWorksError(ERROR_CODES.USAGE, `--into ${request.into}: that is the session's own branch; name the branch to merge into`);
  }
  const merged = await withRepositoryLock(ctx, slot.id, worktree, () =>
    mergeWorktree(gitOptions(ctx.deps), worktree, { ...request, sessionId: slot.id }),
  );
  if (!merged.alreadyMerged) {
    const entry = { into: merged.into, commit: merged.commit, squash: merged.squash, at: new Date().toISOString() };
    await slot.book.update((record) =>
      record.worktree ? { ...record, worktree: { ...record.worktree, merges: [...(record.worktree.merges ?? []), entry] } } : record,
    );
  }
  return { sessionId: slot.id, ...merged };
}

export async function discardSession(ctx: OrchestratorContext, slot: SessionSlot): Promise<void> {
  const worktree = slot.book.record.worktree;
  if (!worktree) throw noWorktree(slot.id);
  assertIdle(slot, 'discard');
  // The agent's process may still run in the worktree between turns: stop it first.
  await slot.closeRunner('discard');
  await discardWorktree(gitOptions(ctx.deps), ctx.deps.stateDir, worktree);
  const at = new Date().toISOString();
  await slot.book.update((record) => ({
    ...record,
    status: 'closed',
    ...(record.worktree ? { worktree: { ...record.worktree, discardedAt: record.worktree.discardedAt ?? at } } : {}),
  }));
}

export async function checkSession(ctx: OrchestratorContext, slot: SessionSlot, request: CheckSessionRequest): Promise<SessionCheck> {
  liveWorktree(slot.book.record);
  assertIdle(slot, 'check');
  // The check runs with the session's HOME, and an agent's exit ends every process with that HOME
  // (core/session/launch.ts): a warm agent closing mid-check (idle, budget) would kill the check.
  // It is stopped first, as for a discard; the next turn starts it again.
  await slot.closeRunner('check');
  const result = await runCheck(slot.book.record, request.command, {
    stateDir: ctx.deps.stateDir,
    sandbox: ctx.deps.worktrees?.sandbox ?? 'none',
    parentEnv: ctx.deps.worktrees?.parentEnv ?? process.env,
    timeoutMs: request.timeoutMs,
  });
  return { sessionId: slot.id, ...result, outputTail: ctx.redactor.redact(result.outputTail) };
}

// A merge writes the user's checkout (and reads the session's worktree): it takes the workspace
// lock of both, so it never runs beside a live turn in the checkout, a turn of this session, or
// another merge into the same repository; refused at once (nothing changed) while one is held.
async function withRepositoryLock<T>(
  ctx: OrchestratorContext,
  sessionId: string,
  worktree: WorktreeRecord,
  body: () => Promise<T>,
): Promise<T> {
  const held = ctx.admission.hold(`a merge of session ${sessionId}`, [worktree.repository, worktree.path]);
  if ('heldBy' in held) {
    throw new OneWorksError(
      ERROR_CODES.WORKSPACE_BUSY,
      `refused: ${worktree.repository} is in use by ${held.heldBy}; merge once it is done (nothing was changed)`,
      { data: { repository: worktree.repository, heldBy: held.heldBy } },
    );
  }
  try {
    return await body();
  } finally {
    held.release();
    // Turns that waited for the lock may start now.
    ctx.pump();
  }
}

// The session's worktree, refusing a session without one or with a discarded one.
function liveWorktree(record: SessionRecord): WorktreeRecord {
  if (!record.worktree) throw noWorktree(record.id);
  assertWorktreePresent(record);
  return record.worktree;
}

function noWorktree(sessionId: string): OneWorksError {
  return new OneWorksError(ERROR_CODES.NO_WORKTREE, `session ${sessionId} has no worktree (it was not started with --worktree)`);
}

// Refuses while the session has a live or queued turn: its agent may still be writing.
function assertIdle(slot: SessionSlot, what: string): void {
  if (slot.turns.size > 0) {
    throw new OneWorksError(
      ERROR_CODES.SESSION_BUSY,
      `refused: session ${slot.id} has a turn running or queued; ${what} once it is done (one-works wait ${slot.id})`,
    );
  }
}
