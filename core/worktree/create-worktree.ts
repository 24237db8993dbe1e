import { copyFile, lstat, mkdir, readlink, realpath, rm, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ERROR_CODES, OneWorksError, isOneWorksError } from '../errors.js';
import type { WorktreeRecord } from '../store/index.js';
import { gitSucceeds, gitText, runGit, type GitOptions } from './git.js';

/** `<state>/worktrees`: one worktree per worktree session. */
export const WORKTREES_DIR = 'worktrees';

/** What `run --worktree` asks for. */
export interface WorktreeRequest {
  /** The commit-ish to start from (default: the repository's current HEAD). */
  base?: string | undefined;
  /**
   * Start at this commit rather than where `base` points now (`compare` starts every contender
   * at the first one's commit); `base` still names the branch that `merge` targets.
   */
  at?: string | undefined;
  /** The new branch (default `ow/<session id>`). */
  branch?: string | undefined;
  /** Copy the checkout's uncommitted changes (tracked and untracked, not ignored) into the worktree. */
  includeUncommitted?: boolean | undefined;
}

/**
 * The repository root (main working tree, canonical) that contains `workspace`. Throws
 * `not_a_repository` when `workspace` is not inside a git working tree.
 */
export async function repositoryRoot(git: GitOptions, workspace: string): Promise<string> {
  try {
    const common = await gitText(git, ['rev-parse', '--path-format=absolute', '--git-common-dir'], { cwd: workspace });
    const top = await gitText(git, ['rev-parse', '--show-toplevel'], { cwd: workspace });
    // A workspace inside a linked worktree belongs to the repository of its common directory.
    const main = path.basename(common) === '.git' ? path.dirname(common) : top;
    return await realpath(main);
  } catch (error) {
    if (!isOneWorksError(error, ERROR_CODES.GIT_FAILED)) throw error;
    throw new OneWorksError(ERROR_CODES.NOT_A_REPOSITORY, `${workspace} is not inside a git repository; --worktree needs one`, {
      data: { workspace },
      cause: error,
    });
  }
}

// `git worktree add` reads every worktree's admin directory (.git/worktrees/<name>) while it makes
// its own: two at once in one repository can fail ("failed to read .git/worktrees/<other>/
// commondir", seen in CI with two parallel `run --worktree` through one orchestrator). This process
// adds one worktree at a time per repository; the adds of different repositories run side by side.
const adding = new Map<string, Promise<unknown>>();

function oneAtATime<T>(repository: string, work: () => Promise<T>): Promise<T> {
  const next = (adding.get(repository) ?? Promise.resolve()).then(work, work);
  const settled = next.then(
    () => undefined,
    () => undefined,
  );
  adding.set(repository, settled);
  void settled.then(() => {
    if (adding.get(repository) === settled) adding.delete(repository);
  });
  return next;
}

/**
 * Creates the session's worktree at `<stateDir>/worktrees/<sessionId>` on a new branch at the
 * base commit (`git worktree add --lock -b`), so the user's checkout, index and HEAD are never
 * touched. With `includeUncommitted`, the checkout's changes against HEAD are applied in the
 * worktree and its untracked files copied (never moved). Returns the record's facts and the
 * session's working directory (the workspace's place inside the worktree).
 *
 * Throws `usage` for an unknown base or an invalid or existing branch, `git_failed` when git
 * refuses; a half-made worktree is removed again before the error is thrown.
 */
export async function createWorktree(
  git: GitOptions,
  options: { stateDir: string; sessionId: string; workspace: string; repository: string; request: WorktreeRequest },
): Promise<{ worktree: WorktreeRecord; workspace: string }> {
  const { repository, request } = options;
  const cwd = repository;
  const baseRef = request.base ?? ((await currentBranch(git, cwd)) || 'HEAD');
  if (!(await gitSucceeds(git, ['rev-parse', '--verify', '--quiet', `${baseRef}^{commit}`], cwd))) {
    throw new OneWorksError(ERROR_CODES.USAGE, `--base ${baseRef}: not a commit in ${repository}`, { data: { baseRef } });
  }
  const startAt = request.at ?? baseRef;
  if (request.at !== undefined && !(await gitSucceeds(git, ['rev-parse', '--verify', '--quiet', `${request.at}^{commit}`], cwd))) {
    throw new OneWorksError(ERROR_CODES.USAGE, `${request.at}: not a commit in ${repository}`, { data: { at: request.at } });
  }
  const baseCommit = await gitText(git, ['rev-parse', '--verify', `${startAt}^{commit}`], { cwd });
  const baseBranch = (await gitSucceeds(git, ['show-ref', '--verify', '--quiet', `refs/heads/${baseRef}`], cwd)) ? baseRef : undefined;
  const branch = request.branch ?? `ow/${options.sessionId}`;
  if (!(await gitSucceeds(git, ['check-ref-format', '--branch', branch], cwd))) {
    throw new OneWorksError(ERROR_CODES.USAGE, `--branch ${branch}: not a valid branch name`, { data: { branch } });
  }
  if (await gitSucceeds(git, ['show-ref', '--verify', '--quiet', `refs/heads/${branch}`], cwd)) {
    throw new OneWorksError(ERROR_CODES.USAGE, `--branch ${branch}: the branch already exists in ${repository}; name a new one`, {
      data: { branch },
    });
  }
  const root = path.join(options.stateDir, WORKTREES_DIR);
  await mkdir(root, { recursive: true, mode: 0o700 });
  const worktreePath = path.join(root, options.sessionId);
  await oneAtATime(repository, () =>
    runGit(
      git,
      ['worktree', 'add', '--lock', '--reason', `one-works session ${options.sessionId}`, '-b', branch, worktreePath, baseCommit],
      {
        cwd,
      },
    ),
  );
  try {
    const gitDir = await gitText(git, ['rev-parse', '--absolute-git-dir'], { cwd: worktreePath });
    const commonDir = await gitText(git, ['rev-parse', '--path-format=absolute', '--git-common-dir'], { cwd: worktreePath });
    if (request.includeUncommitted) await copyUncommitted(git, repository, worktreePath);
    const relative = path.relative(repository, options.workspace);
    return {
      worktree: { repository, baseRef, ...(baseBranch ? { baseBranch } : {}), baseCommit, branch, path: worktreePath, gitDir, commonDir },
      workspace: path.join(worktreePath, relative),
    };
  } catch (error) {
    await removeWorktreeQuietly(git, repository, worktreePath, branch);
    throw error;
  }
}

// The short name of the branch HEAD is on; '' when HEAD is detached.
async function currentBranch(git: GitOptions, cwd: string): Promise<string> {
  const result = await runGit(git, ['symbolic-ref', '--quiet', '--short', 'HEAD'], { cwd, okExitCodes: [1] });
  return result.exitCode === 0 ? result.stdout.trim() : '';
}

// Applies the checkout's tracked changes against HEAD, then copies its untracked files. Reads only.
async function copyUncommitted(git: GitOptions, repository: string, worktreePath: string): Promise<void> {
  const patch = (await runGit(git, ['diff', '--binary', '--no-ext-diff', '--no-textconv', 'HEAD', '--'], { cwd: repository })).stdout;
  if (patch.trim() !== '') {
    const file = path.join(path.dirname(worktreePath), `${path.basename(worktreePath)}.uncommitted.patch`);
    await writeFile(file, `${patch}\n`, { mode: 0o600 });
    try {
      await runGit(git, ['apply', '--binary', '--whitespace=nowarn', file], { cwd: worktreePath });
    } finally {
      await rm(file, { force: true });
    }
  }
  const untracked = (await runGit(git, ['ls-files', '--others', '--exclude-standard', '-z'], { cwd: repository })).stdout
    .split('\0')
    .filter((name) => name !== '');
  for (const name of untracked) {
    const from = path.join(repository, name);
    const to = path.join(worktreePath, name);
    await mkdir(path.dirname(to), { recursive: true });
    const info = await lstat(from);
    if (info.isSymbolicLink()) await symlink(await readlink(from), to);
    else await copyFile(from, to);
  }
}

// Best-effort removal of a worktree and its branch after a failed creation.
async function removeWorktreeQuietly(git: GitOptions, repository: string, worktreePath: string, branch: string): Promise<void> {
  await runGit(git, ['worktree', 'unlock', worktreePath], { cwd: repository }).catch(() => undefined);
  await rm(worktreePath, { recursive: true, force: true });
  await runGit(git, ['worktree', 'remove', worktreePath], { cwd: repository }).catch(() => undefined);
  await runGit(git, ['branch', '--delete', branch], { cwd: repository }).catch(() => undefined);
}
