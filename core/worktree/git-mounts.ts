import { mkdir, open, readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { WorktreeRecord } from '../store/index.js';

type MountedWorktree = Pick<WorktreeRecord, 'path' | 'gitDir' | 'commonDir' | 'branch'>;

/**
 * The bubblewrap mounts of a worktree session: the repository's common git directory
 * read-only (visible even when it lies under the sandbox's private /tmp), then the worktree
 * and {@link gitWritablePaths} writable over it, then every other ref in the directory of the
 * session's own branch ref read-only again ({@link otherRefsBeside}), so that the agent can move
 * its own branch and no other.
 */
export async function worktreeMounts(
  worktree: MountedWorktree,
): Promise<{ readOnly: string[]; writable: string[]; readOnlyOver: string[] }> {
  const writable = [worktree.path, ...(await gitWritablePaths(worktree))];
  return { readOnly: [worktree.commonDir], writable, readOnlyOver: await otherRefsBeside(worktree) };
}

/**
 * What git writes in the repository's git directory when it works in this worktree (status,
 * add, commit on the session's branch): the worktree's own administrative directory
 * (`<common>/worktrees/<name>`: HEAD, index, its logs), the object database, the directory
 * that holds the branch's ref (git writes `<ref>.lock` there and renames it over the ref), and
 * the branch's reflog file (appended in place). Everything else of `.git` (config, hooks,
 * packed-refs, other reflogs, the main checkout's index and HEAD) stays read-only under bwrap.
 * Creates the ref directory and the reflog file when missing, since a bind needs a source.
 */
export async function gitWritablePaths(worktree: Pick<WorktreeRecord, 'gitDir' | 'commonDir' | 'branch'>): Promise<string[]> {
  const refDir = path.dirname(refPath(worktree));
  const reflog = path.join(worktree.commonDir, 'logs', 'refs', 'heads', worktree.branch);
  await mkdir(refDir, { recursive: true });
  await mkdir(path.dirname(reflog), { recursive: true });
  await (await open(reflog, 'a')).close();
  return [worktree.gitDir, path.join(worktree.commonDir, 'objects'), refDir, reflog];
}

/**
 * The entries beside the session's own ref in its directory (other branches' ref files and
 * subdirectories, e.g. `refs/heads/ow/<other session>`), to bind read-only over the writable
 * directory. A ref that lives only in `packed-refs` has no file to protect, and a loose file
 * the agent created would shadow it: such refs in that directory get their loose file first
 * (the same commit, so nothing changes for git).
 */
export async function otherRefsBeside(worktree: Pick<WorktreeRecord, 'commonDir' | 'branch'>): Promise<string[]> {
  const own = refPath(worktree);
  const refDir = path.dirname(own);
  await unpackRefsUnder(worktree.commonDir, refDir, own);
  const entries = await readdir(refDir).catch(() => []);
  return entries.map((name) => path.join(refDir, name)).filter((entry) => entry !== own && !entry.endsWith('.lock'));
}

function refPath(worktree: Pick<WorktreeRecord, 'commonDir' | 'branch'>): string {
  return path.join(worktree.commonDir, 'refs', 'heads', worktree.branch);
}

// Writes a loose ref file for every packed ref under `refDir` (except `own`) that has none.
async function unpackRefsUnder(commonDir: string, refDir: string, own: string): Promise<void> {
  const packed = await readFile(path.join(commonDir, 'packed-refs'), 'utf8').catch(() => '');
  for (const line of packed.split('\n')) {
    const match = /^([0-9a-f]{40,64}) (refs\/\S+)$/.exec(line);
    if (!match) continue;
    const file = path.join(commonDir, match[2]!);
    if (file === own || !file.startsWith(`${refDir}${path.sep}`)) continue;
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, `${match[1]}\n`, { flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
  }
}
