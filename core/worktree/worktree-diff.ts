import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { WorktreeRecord } from '../store/index.js';
import { gitText, runGit, type GitOptions } from './git.js';

/** One changed file: lines added and removed (null for a binary file). */
export interface ChangedFile {
  path: string;
  added: number | null;
  removed: number | null;
}

/** A session's changes against its base commit: committed, staged, unstaged and untracked alike. */
export interface WorktreeChanges {
  baseCommit: string;
  files: ChangedFile[];
  linesAdded: number;
  linesRemoved: number;
  /** The unified diff (absent with `stat`). */
  patch?: string | undefined;
}

const DIFF_FLAGS = ['--no-ext-diff', '--no-textconv', '--no-renames', '--no-color'] as const;

/**
 * Runs `body` with a scratch index (GIT_INDEX_FILE in a private temp dir) that holds the whole
 * worktree as it is on disk: HEAD's tree plus `git add -A` (ignored files stay out). The
 * worktree's own index and HEAD are left exactly as they were; the temp dir is removed after.
 */
export async function withWorktreeSnapshot<T>(
  git: GitOptions,
  worktree: Pick<WorktreeRecord, 'path'>,
  body: (env: Record<string, string>) => Promise<T>,
): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'one-works-index-'));
  const env = { GIT_INDEX_FILE: path.join(dir, 'index') };
  try {
    await runGit(git, ['read-tree', 'HEAD'], { cwd: worktree.path, env });
    await runGit(git, ['add', '-A', '--', '.'], { cwd: worktree.path, env });
    return await body(env);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The tree object of the worktree as it is on disk (see {@link withWorktreeSnapshot}). */
export async function snapshotTree(git: GitOptions, worktree: Pick<WorktreeRecord, 'path'>): Promise<string> {
  return withWorktreeSnapshot(git, worktree, (env) => gitText(git, ['write-tree'], { cwd: worktree.path, env }));
}

/**
 * The session's changes against `worktree.baseCommit`, as on disk now: what the agent
 * committed on its branch and what it left uncommitted or untracked. `stat` leaves the patch out.
 */
export async function worktreeDiff(
  git: GitOptions,
  worktree: Pick<WorktreeRecord, 'path' | 'baseCommit'>,
  options: { stat?: boolean } = {},
): Promise<WorktreeChanges> {
  return withWorktreeSnapshot(git, worktree, async (env) => {
    const call = { cwd: worktree.path, env };
    const numstat = await gitText(git, ['diff', '--cached', ...DIFF_FLAGS, '--numstat', '-z', worktree.baseCommit, '--'], call);
    const files = parseNumstat(numstat);
    // runCommand strips the final newline; a patch ends with one.
    const patch = options.stat
      ? undefined
      : withFinalNewline((await runGit(git, ['diff', '--cached', ...DIFF_FLAGS, worktree.baseCommit, '--'], call)).stdout);
    return {
      baseCommit: worktree.baseCommit,
      files,
      linesAdded: files.reduce((sum, file) => sum + (file.added ?? 0), 0),
      linesRemoved: files.reduce((sum, file) => sum + (file.removed ?? 0), 0),
      ...(patch === undefined ? {} : { patch }),
    };
  });
}

// `--numstat -z` without renames: "<added>\t<removed>\t<path>\0" per file, "-" for binary counts.
function parseNumstat(output: string): ChangedFile[] {
  return output
    .split('\0')
    .filter((entry) => entry !== '')
    .map((entry) => {
      const [added = '-', removed = '-', ...rest] = entry.split('\t');
      return { path: rest.join('\t'), added: added === '-' ? null : Number(added), removed: removed === '-' ? null : Number(removed) };
    });
}

function withFinalNewline(text: string): string {
  return text === '' ? '' : `${text}\n`;
}
