import { mkdir, mkdtemp, readFile, realpath, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isOneWorksError } from '../../../core/errors.js';
import {
  createWorktree,
  discardWorktree,
  mergeWorktree,
  repositoryRoot,
  worktreeDiff,
  worktreeMounts,
} from '../../../core/worktree/index.js';
import type { WorktreeRecord } from '../../../core/store/index.js';
import { git, hashTree, initRepo } from '../../support/git-repo.js';

// Real git on temp repositories: the worktree's life from creation to discard.

const GIT = { parentEnv: { PATH: process.env.PATH } };
// What a worktree session may add to the repository's .git: its admin dir, objects, refs and reflogs.
const SESSION_GIT_PARTS = ['.git/worktrees', '.git/objects', '.git/refs', '.git/logs'];

let root: string;
let repo: string;
let stateDir: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'ow-worktree-')));
  repo = join(root, 'repo');
  stateDir = join(root, 'state');
  await mkdir(repo);
  await mkdir(stateDir);
  await initRepo(repo, { 'a.txt': 'one\ntwo\n', 'src/b.txt': 'bee\n' });
});
afterEach(() => rm(root, { recursive: true, force: true }));

async function make(sessionId: string, request = {}): Promise<WorktreeRecord> {
  const repository = await repositoryRoot(GIT, repo);
  return (await createWorktree(GIT, { stateDir, sessionId, workspace: repo, repository, request })).worktree;
}

describe('worktree sessions with real git', () => {
  it('creates a locked worktree on ow/<id> at HEAD and leaves the checkout, index and untracked files byte-identical', async () => {
    await writeFile(join(repo, 'a.txt'), 'one\ntwo\nlocal edit\n');
    await writeFile(join(repo, 'untracked.txt'), 'mine\n');
    await git(repo, 'add', 'a.txt');
    await writeFile(join(repo, 'src/b.txt'), 'bee\nunstaged\n');
    const before = await hashTree(repo, SESSION_GIT_PARTS);

    const wt = await make('s-1');
    expect(wt.branch).toBe('ow/s-1');
    expect(wt.baseBranch).toBe('main');
    expect(wt.path).toBe(join(stateDir, 'worktrees', 's-1'));
    expect(wt.baseCommit).toBe(await git(repo, 'rev-parse', 'HEAD'));
    expect(await readFile(join(wt.path, 'a.txt'), 'utf8')).toBe('one\ntwo\n');
    await expect(stat(join(wt.path, 'untracked.txt'))).rejects.toThrow(/ENOENT/);
    expect(await git(repo, 'worktree', 'list', '--porcelain')).toContain('locked one-works session s-1');

    await writeFile(join(wt.path, 'a.txt'), 'one\nTWO\n');
    await writeFile(join(wt.path, 'new.txt'), 'n\n');
    expect(await hashTree(repo, SESSION_GIT_PARTS)).toBe(before);
  });

  it('copies uncommitted changes only with includeUncommitted, never moving them', async () => {
    await writeFile(join(repo, 'a.txt'), 'one\ntwo\nlocal\n');
    await writeFile(join(repo, 'extra.txt'), 'x\n');
    const before = await hashTree(repo, SESSION_GIT_PARTS);
    const wt = await make('s-2', { includeUncommitted: true });
    expect(await readFile(join(wt.path, 'a.txt'), 'utf8')).toBe('one\ntwo\nlocal\n');
    expect(await readFile(join(wt.path, 'extra.txt'), 'utf8')).toBe('x\n');
    expect(await hashTree(repo, SESSION_GIT_PARTS)).toBe(before);
  });

  it('diff shows committed, uncommitted and untracked changes against the base, exactly', async () => {
    const wt = await make('s-3');
    await writeFile(join(wt.path, 'a.txt'), 'one\nTWO\n');
    await git(wt.path, 'commit', '-q', '-am', 'agent commit');
    await writeFile(join(wt.path, 'src/b.txt'), 'bee\nmore\n');
    await writeFile(join(wt.path, 'new.txt'), 'fresh\n');
    const indexBefore = await readFile(join(wt.gitDir, 'index'));

    const stat = await worktreeDiff(GIT, wt, { stat: true });
    expect(stat.files).toEqual([
      { path: 'a.txt', added: 1, removed: 1 },
      { path: 'new.txt', added: 1, removed: 0 },
      { path: 'src/b.txt', added: 1, removed: 0 },
    ]);
    expect([stat.linesAdded, stat.linesRemoved, stat.patch]).toEqual([3, 1, undefined]);
    const full = await worktreeDiff(GIT, wt);
    expect(full.patch).toContain('-two\n+TWO\n');
    expect(full.patch).toContain('+++ b/new.txt\n@@ -0,0 +1 @@\n+fresh\n');
    expect(await readFile(join(wt.gitDir, 'index'))).toEqual(indexBefore);
  });

  it('merges into the checked-out base branch, then refuses a conflicting merge and changes nothing', async () => {
    const first = await make('s-4');
    const second = await make('s-5');
    await writeFile(join(first.path, 'a.txt'), 'one\nfirst\n');
    await writeFile(join(second.path, 'a.txt'), 'one\nsecond\n');

    const merged = await mergeWorktree(GIT, first, { sessionId: 's-4' });
    expect(merged).toMatchObject({ into: 'main', checkout: repo, alreadyMerged: false });
    expect(await readFile(join(repo, 'a.txt'), 'utf8')).toBe('one\nfirst\n');
    expect(await git(repo, 'status', '--porcelain')).toBe('');

    // A refused merge may leave unreachable objects (its trial tree) in the object database; nothing else.
    const before = await hashTree(repo, ['.git/objects']);
    const refused = await mergeWorktree(GIT, second, { sessionId: 's-5' }).catch((error: unknown) => error);
    expect(isOneWorksError(refused, 'merge_conflict')).toBe(true);
    expect((refused as Error).message).toContain('a.txt');
    expect(await hashTree(repo, ['.git/objects'])).toBe(before);
  });

  it('refuses to merge into a dirty checkout and squashes into a branch that is not checked out', async () => {
    const wt = await make('s-6');
    await writeFile(join(wt.path, 'c.txt'), 'c\n');
    await writeFile(join(repo, 'a.txt'), 'dirty\n');
    const dirty = await mergeWorktree(GIT, wt, { sessionId: 's-6' }).catch((error: unknown) => error);
    expect(isOneWorksError(dirty, 'target_dirty')).toBe(true);
    expect(await readFile(join(repo, 'a.txt'), 'utf8')).toBe('dirty\n');

    await git(repo, 'branch', 'side');
    const squashed = await mergeWorktree(GIT, wt, { sessionId: 's-6', into: 'side', squash: true });
    expect(squashed.checkout).toBeUndefined();
    expect(await git(repo, 'rev-parse', 'side^')).toBe(wt.baseCommit);
    expect(await git(repo, 'show', 'side:c.txt')).toBe('c');
  });

  it('discard removes the worktree, its admin files and its branch', async () => {
    const wt = await make('s-7');
    await writeFile(join(wt.path, 'junk.txt'), 'junk\n');
    await discardWorktree(GIT, stateDir, wt);
    await expect(stat(wt.path)).rejects.toThrow(/ENOENT/);
    await expect(stat(wt.gitDir)).rejects.toThrow(/ENOENT/);
    expect(await git(repo, 'branch', '--list', 'ow/*')).toBe('');
    expect(await git(repo, 'worktree', 'list', '--porcelain')).not.toContain(wt.path);
    await discardWorktree(GIT, stateDir, wt);
  });

  it('refuses a workspace outside git, an unknown base and an existing branch', async () => {
    const plain = join(root, 'plain');
    await mkdir(plain);
    const notRepo = await repositoryRoot(GIT, plain).catch((error: unknown) => error);
    expect(isOneWorksError(notRepo, 'not_a_repository')).toBe(true);
    await expect(make('s-8', { base: 'nope' })).rejects.toThrow(/--base nope/);
    await expect(make('s-9', { branch: 'main' })).rejects.toThrow(/already exists/);
  });

  it("bwrap mounts: its own branch's ref directory and reflog writable, every other ref there read-only (packed ones unpacked first)", async () => {
    await git(repo, 'branch', 'ow/s-packed');
    await git(repo, 'pack-refs', '--all');
    await git(repo, 'branch', 'ow/s-loose');
    const wt = await make('s-1');
    const common = join(repo, '.git');
    const mounts = await worktreeMounts(wt);
    expect(mounts.readOnly).toEqual([common]);
    expect(mounts.writable).toEqual([
      wt.path,
      wt.gitDir,
      join(common, 'objects'),
      join(common, 'refs/heads/ow'),
      join(common, 'logs/refs/heads/ow/s-1'),
    ]);
    expect([...mounts.readOnlyOver].sort()).toEqual([join(common, 'refs/heads/ow/s-loose'), join(common, 'refs/heads/ow/s-packed')]);
    // The packed ref got its loose file with the same commit: git sees no change.
    expect((await readFile(join(common, 'refs/heads/ow/s-packed'), 'utf8')).trim()).toBe(await git(repo, 'rev-parse', 'ow/s-packed'));
    expect(await git(repo, 'rev-parse', 'ow/s-packed')).toBe(wt.baseCommit);
  });

  // `git worktree add` reads every worktree's admin directory (.git/worktrees/<name>) while it
  // makes its own: two at once in one repository failed in CI ("failed to read
  // .git/worktrees/<other>/commondir"), with two parallel `run --worktree` through one
  // orchestrator. Without one add at a time per repository this case failed in 2 of 3 runs.
  it('gives every session created at the same moment in one repository its worktree and branch', async () => {
    const parallel = 12;
    const rounds = 6;
    for (let round = 0; round < rounds; round += 1) {
      const made = await Promise.allSettled(Array.from({ length: parallel }, (_, i) => make(`s-${round}-${i}`)));
      expect(made.flatMap((result) => (result.status === 'rejected' ? [String(result.reason)] : []))).toEqual([]);
    }
    const listed = await git(repo, 'worktree', 'list', '--porcelain');
    expect(listed.match(/^branch refs\/heads\/ow\/s-/gm)).toHaveLength(rounds * parallel);
  });
});
