import { ERROR_CODES, OneWorksError } from '../errors.js';
import type { WorktreeRecord } from '../store/index.js';
import { gitSucceeds, gitText, runGit, type GitOptions } from './git.js';
import { snapshotTree } from './worktree-diff.js';

/** What `merge` asks for. */
export interface MergeRequest {
  sessionId: string;
  /** One commit with the session's changes, parented on the target only. */
  squash?: boolean | undefined;
  /** The branch to merge into (default: the session's base branch). */
  into?: string | undefined;
}

/** What a merge did. */
export interface MergeResult {
  into: string;
  /** The target branch's new tip (unchanged when `alreadyMerged`). */
  commit: string;
  squash: boolean;
  /** True when the target was moved forward without a merge commit. */
  fastForward: boolean;
  /** True when the target already contained the session's changes: nothing was changed. */
  alreadyMerged: boolean;
  /** Where the target branch is checked out, if anywhere (that checkout was updated by git). */
  checkout?: string | undefined;
}

// Used when the repository has no identity of its own; the user's identity wins when set.
const FALLBACK_IDENTITY = { name: 'One Works', email: 'one-works@localhost' };

/**
 * Merges the session's changes (its branch, plus a snapshot commit of what it left uncommitted
 * in the worktree) into `into` or the base branch of the user's repository. The merge is tried
 * first without touching anything (`git merge-tree --write-tree`); it is refused, changing
 * nothing, with `merge_conflict` (naming the files) on conflicts and `target_dirty` when the
 * target's checkout has uncommitted changes to tracked files. The target moves only forward:
 * in its checkout through `git merge --ff-only` (git refuses to overwrite untracked files),
 * elsewhere through a compare-and-swap `update-ref`. Never a force. `usage` when there is no
 * target branch.
 */
export async function mergeWorktree(git: GitOptions, worktree: WorktreeRecord, request: MergeRequest): Promise<MergeResult> {
  const repo = worktree.repository;
  const into = request.into ?? worktree.baseBranch;
  if (into === undefined) {
    throw new OneWorksError(
      ERROR_CODES.USAGE,
      `session ${request.sessionId} started from ${worktree.baseRef}, not a branch; name the target with --into BRANCH`,
    );
  }
  if (!(await gitSucceeds(git, ['show-ref', '--verify', '--quiet', `refs/heads/${into}`], repo))) {
    throw new OneWorksError(ERROR_CODES.USAGE, `--into ${into}: no such branch in ${repo}`, { data: { into } });
  }
  const squash = request.squash === true;
  const identity = await identityEnv(git, repo);
  const source = await sourceCommit(git, worktree, request.sessionId, identity);
  const target = await gitText(git, ['rev-parse', '--verify', `refs/heads/${into}^{commit}`], { cwd: repo });
  const checkout = await checkoutOf(git, repo, into);
  const base = { into, squash, ...(checkout ? { checkout } : {}) };
  if (await gitSucceeds(git, ['merge-base', '--is-ancestor', source, target], repo)) {
    return { ...base, commit: target, fastForward: false, alreadyMerged: true };
  }
  if (checkout !== undefined) {
    const dirty = await gitText(git, ['status', '--porcelain', '--untracked-files=no'], { cwd: checkout });
    if (dirty !== '') {
      throw new OneWorksError(
        ERROR_CODES.TARGET_DIRTY,
        `refused: ${into} is checked out in ${checkout} with uncommitted changes; commit or stash them, then merge again (nothing was changed)`,
        { data: { into, checkout } },
      );
    }
  }
  const trial = await runGit(git, ['merge-tree', '--write-tree', '--name-only', '--no-messages', target, source], {
    cwd: repo,
    okExitCodes: [1],
  });
  const [tree = '', ...conflicted] = trial.stdout.split('\n').filter((line) => line !== '');
  if (trial.exitCode === 1) {
    throw new OneWorksError(
      ERROR_CODES.MERGE_CONFLICT,
      `refused: merging session ${request.sessionId} into ${into} conflicts in ${conflicted.join(', ')}; nothing was changed (resolve in the session, e.g. with \`one-works send\`, or merge by hand from branch ${worktree.branch})`,
      { data: { into, conflicted } },
    );
  }
  const fastForward = !squash && (await gitSucceeds(git, ['merge-base', '--is-ancestor', target, source], repo));
  const message = squash
    ? `One Works session ${request.sessionId} (${worktree.branch}), squashed`
    : `Merge One Works session ${request.sessionId} (${worktree.branch}) into ${into}`;
  const commit = fastForward
    ? source
    : await gitText(git, ['commit-tree', tree, '-p', target, ...(squash ? [] : ['-p', source]), '-m', message], {
        cwd: repo,
        env: identity,
      });
  if (checkout !== undefined) {
    await runGit(git, ['merge', '--ff-only', '--no-edit', '--quiet', commit], { cwd: checkout });
  } else {
    await runGit(git, ['update-ref', '-m', `one-works: ${message}`, `refs/heads/${into}`, commit, target], { cwd: repo });
  }
  return { ...base, commit, fastForward, alreadyMerged: false };
}

// The session branch's tip, or a commit on top of it holding what the worktree has uncommitted.
async function sourceCommit(
  git: GitOptions,
  worktree: WorktreeRecord,
  sessionId: string,
  identity: Record<string, string>,
): Promise<string> {
  const head = await gitText(git, ['rev-parse', '--verify', 'HEAD^{commit}'], { cwd: worktree.path });
  const tree = await snapshotTree(git, worktree);
  const headTree = await gitText(git, ['rev-parse', '--verify', 'HEAD^{tree}'], { cwd: worktree.path });
  if (tree === headTree) return head;
  return gitText(git, ['commit-tree', tree, '-p', head, '-m', `One Works session ${sessionId}: changes left uncommitted in the worktree`], {
    cwd: worktree.path,
    env: identity,
  });
}

// GIT_AUTHOR_*/GIT_COMMITTER_* only when the repository (or the user) has no identity configured.
async function identityEnv(git: GitOptions, cwd: string): Promise<Record<string, string>> {
  const name = await runGit(git, ['config', '--get', 'user.name'], { cwd, okExitCodes: [1] });
  const email = await runGit(git, ['config', '--get', 'user.email'], { cwd, okExitCodes: [1] });
  const env: Record<string, string> = {};
  if (name.exitCode !== 0) Object.assign(env, { GIT_AUTHOR_NAME: FALLBACK_IDENTITY.name, GIT_COMMITTER_NAME: FALLBACK_IDENTITY.name });
  if (email.exitCode !== 0) Object.assign(env, { GIT_AUTHOR_EMAIL: FALLBACK_IDENTITY.email, GIT_COMMITTER_EMAIL: FALLBACK_IDENTITY.email });
  return env;
}

// The working tree where `branch` is checked out (`git worktree list --porcelain`), if any.
async function checkoutOf(git: GitOptions, repo: string, branch: string): Promise<string | undefined> {
  const listing = await gitText(git, ['worktree', 'list', '--porcelain'], { cwd: repo });
  for (const block of listing.split('\n\n')) {
    const lines = block.split('\n');
    const worktree = lines.find((line) => line.startsWith('worktree '))?.slice('worktree '.length);
    if (worktree !== undefined && lines.includes(`branch refs/heads/${branch}`)) return worktree;
  }
  return undefined;
}
