import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import type { WorktreeRecord } from '../store/index.js';

/**
 * The bubblewrap mounts of a worktree session: the repository's common git directory
 * read-only (visible even when it lies under the sandbox's private /tmp), then the worktree
 * and {@link gitWritablePaths} writable over it.
 */
export async function worktreeMounts(
  worktree: Pick<WorktreeRecord, 'path' | 'gitDir' | 'commonDir' | 'branch'>,
): Promise<{ readOnly: string[]; writable: string[] }> {
  return { readOnly: [worktree.commonDir], writable: [worktree.path, ...(await gitWritablePaths(worktree))] };
}

/**
 * The parts of the repository's git directory that git writes when it works in this worktree
 * (status, add, commit on the session's branch): the worktree's own administrative directory
 * (index, HEAD, logs), the object database, and the directories that hold the session
 * branch's ref and its reflog. Everything else of `.git` (config, hooks, other branches' refs
 * outside that directory, the main checkout's index and HEAD) stays read-only under bwrap.
 * Creates the ref and reflog directories when missing, since a bind needs an existing source.
 */
export async function gitWritablePaths(worktree: Pick<WorktreeRecord, 'gitDir' | 'commonDir' | 'branch'>): Promise<string[]> {
  const refDir = path.dirname(path.join(worktree.commonDir, 'refs', 'heads', worktree.branch));
  const logDir = path.dirname(path.join(worktree.commonDir, 'logs', 'refs', 'heads', worktree.branch));
  await mkdir(refDir, { recursive: true });
  await mkdir(logDir, { recursive: true });
  return [worktree.gitDir, path.join(worktree.commonDir, 'objects'), refDir, logDir];
}
