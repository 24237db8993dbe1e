import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { ERROR_CODES, OneWorksError } from '../errors.js';
import type { WorktreeRecord } from '../store/index.js';
import { isWithin } from '../workspace/index.js';
import { runGit, type GitOptions } from './git.js';
import { WORKTREES_DIR } from './create-worktree.js';

/**
 * Removes a session's worktree and its branch: unlocks it, deletes its directory (only a
 * directory under `<stateDir>/worktrees/` whose `.git` file points at the recorded git dir),
 * lets git drop its administrative files (`git worktree remove` of the missing tree), and
 * deletes the branch with a compare-and-swap on the tip it has now (`update-ref -d`). What the
 * session changed is lost unless it was merged. The user's checkout is not touched.
 *
 * Throws `internal` when the recorded path is not One Works' own worktree, `git_failed` when
 * git refuses. A worktree already gone is not an error (discard is idempotent).
 */
export async function discardWorktree(git: GitOptions, stateDir: string, worktree: WorktreeRecord): Promise<void> {
  const repo = worktree.repository;
  if (!isWithin(worktree.path, path.join(stateDir, WORKTREES_DIR)) || worktree.path === path.join(stateDir, WORKTREES_DIR)) {
    throw new OneWorksError(ERROR_CODES.INTERNAL, `refusing to remove ${worktree.path}: not under ${path.join(stateDir, WORKTREES_DIR)}`);
  }
  const pointer = await readFile(path.join(worktree.path, '.git'), 'utf8').catch(() => undefined);
  if (pointer !== undefined && pointer.trim() !== `gitdir: ${worktree.gitDir}`) {
    throw new OneWorksError(ERROR_CODES.INTERNAL, `refusing to remove ${worktree.path}: its .git does not point at ${worktree.gitDir}`);
  }
  const registered = await isRegistered(git, repo, worktree.path);
  if (registered) await runGit(git, ['worktree', 'unlock', worktree.path], { cwd: repo, okExitCodes: [128] });
  await rm(worktree.path, { recursive: true, force: true });
  if (registered) await runGit(git, ['worktree', 'remove', worktree.path], { cwd: repo });
  const tip = await runGit(git, ['rev-parse', '--verify', '--quiet', `refs/heads/${worktree.branch}`], { cwd: repo, okExitCodes: [1] });
  if (tip.exitCode === 0) {
    await runGit(git, ['update-ref', '-m', 'one-works: discard', '-d', `refs/heads/${worktree.branch}`, tip.stdout.trim()], { cwd: repo });
  }
}

// True when git still lists `worktreePath` among the repository's worktrees.
async function isRegistered(git: GitOptions, repo: string, worktreePath: string): Promise<boolean> {
  const listing = (await runGit(git, ['worktree', 'list', '--porcelain'], { cwd: repo })).stdout;
  return listing.split('\n').includes(`worktree ${worktreePath}`);
}
