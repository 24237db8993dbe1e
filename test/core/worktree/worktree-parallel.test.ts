import { mkdir, mkdtemp, realpath, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createWorktree, repositoryRoot } from '../../../core/worktree/index.js';
import { git, initRepo } from '../../support/git-repo.js';

// `git worktree add` reads every worktree's admin directory (.git/worktrees/<name>) while it makes
// its own, so two at once in one repository can fail with "failed to read .git/worktrees/<other>/
// commondir" (CI saw it with two parallel `run --worktree` through one orchestrator). Sessions
// created at the same moment in the same repository all get their worktree.

const GIT = { parentEnv: { PATH: process.env.PATH } };
const PARALLEL = 12;
const ROUNDS = 6;

let root: string;
let repo: string;
let stateDir: string;
beforeEach(async () => {
  root = await realpath(await mkdtemp(join(tmpdir(), 'ow-worktree-parallel-')));
  repo = join(root, 'repo');
  stateDir = join(root, 'state');
  await mkdir(repo);
  await mkdir(stateDir);
  await initRepo(repo, { 'a.txt': 'one\n' });
});
afterEach(() => rm(root, { recursive: true, force: true }));

describe('worktrees created at the same moment in one repository', () => {
  it('each gets its worktree and branch', async () => {
    const repository = await repositoryRoot(GIT, repo);
    for (let round = 0; round < ROUNDS; round += 1) {
      const ids = Array.from({ length: PARALLEL }, (_, i) => `s-${round}-${i}`);
      const made = await Promise.allSettled(
        ids.map((sessionId) => createWorktree(GIT, { stateDir, sessionId, workspace: repo, repository, request: {} })),
      );
      const failed = made.flatMap((result) => (result.status === 'rejected' ? [String(result.reason)] : []));
      expect(failed).toEqual([]);
    }
    const listed = await git(repo, 'worktree', 'list', '--porcelain');
    expect(listed.match(/^branch refs\/heads\/ow\/s-/gm)).toHaveLength(ROUNDS * PARALLEL);
  });
});
