import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { git, initRepo } from '../support/git-repo.js';
import { CliRigs } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { byPrompt } from './orchestrator-rig.js';
import { writeWord } from './worktree-rig.js';

// README: `--base`, `--branch` and `--include-uncommitted` imply `--worktree`. A run of the real
// droid with only `--branch x` (then only `--base REF`, then only `--include-uncommitted`) works in a new git worktree on that
// branch (at that commit), with real git; the user's checkout is left alone.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// droid 0.225.2's Execute supervisor polls every 2 s whether droid lives, then kills its group.
const TOOL_LINGER_MS = 10_000;

describe('run options that imply --worktree', () => {
  it("--branch x creates a worktree on branch x; --base REF one at REF; --include-uncommitted one with the checkout's changes", async () => {
    const model = await rigs.model({
      steps: byPrompt({ 'write alpha': writeWord('alpha', 0), 'write beta': writeWord('beta', 0), 'write gamma': writeWord('gamma', 0) }),
    });
    // Autonomy high: the policy allows the scripted commands (droid asks One Works before each).
    const rig = await rigs.create({ baseUrl: model.baseUrl, droid: { autonomy: 'high' } });
    const repo = rig.workspace;
    await initRepo(repo, { 'a.txt': 'one\n' });
    const first = await git(repo, 'rev-parse', 'main');
    await writeFile(join(repo, 'a.txt'), 'two\n');
    await git(repo, 'commit', '-q', '-am', 'second');
    const main = await git(repo, 'rev-parse', 'main');

    const branched = await rig.run(['--json', 'run', '--no-hint', '--branch', 'feature-x', '-w', repo, 'write alpha']);
    expect(branched.exitCode, branched.stderr).toBe(0);
    const alpha = (JSON.parse(branched.stdout.trim().split('\n').at(-1)!) as { sessionId: string }).sessionId;
    const recordA = await rig.readSession(alpha);
    expect(recordA.runs[0]!.status).toBe('completed');
    expect(recordA.worktree).toMatchObject({ repository: repo, branch: 'feature-x', baseBranch: 'main', baseCommit: main });
    expect(recordA.worktree!.path).toBe(join(rig.stateDir, 'worktrees', alpha));
    expect(recordA.workspace).toBe(recordA.worktree!.path);
    // Real git: the branch exists, is checked out in that worktree, and the agent wrote there only.
    expect(await git(repo, 'rev-parse', 'feature-x')).toBe(main);
    expect(await git(recordA.worktree!.path, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('feature-x');
    expect(await readFile(join(recordA.worktree!.path, 'feature.txt'), 'utf8')).toBe('alpha\n');
    expect(existsSync(join(repo, 'feature.txt'))).toBe(false);
    expect(await git(repo, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
    expect(await git(repo, 'status', '--porcelain')).toBe('');

    const based = await rig.run(['--json', 'run', '--no-hint', '--base', first, '-w', repo, 'write beta']);
    expect(based.exitCode, based.stderr).toBe(0);
    const beta = (JSON.parse(based.stdout.trim().split('\n').at(-1)!) as { sessionId: string }).sessionId;
    const recordB = await rig.readSession(beta);
    expect(recordB.runs[0]!.status).toBe('completed');
    expect(recordB.worktree).toMatchObject({ repository: repo, branch: `ow/${beta}`, baseCommit: first });
    expect(await git(recordB.worktree!.path, 'rev-parse', 'HEAD')).toBe(first);
    expect(await readFile(join(recordB.worktree!.path, 'a.txt'), 'utf8')).toBe('one\n');
    expect(await readFile(join(recordB.worktree!.path, 'feature.txt'), 'utf8')).toBe('beta\n');
    expect(await git(repo, 'rev-parse', 'main')).toBe(main);
    expect(existsSync(join(repo, 'feature.txt'))).toBe(false);

    // The user's uncommitted work is copied into a new worktree, never moved.
    await writeFile(join(repo, 'notes.txt'), 'untracked\n');
    const copied = await rig.run(['--json', 'run', '--no-hint', '--include-uncommitted', '-w', repo, 'write gamma']);
    expect(copied.exitCode, copied.stderr).toBe(0);
    const gamma = (JSON.parse(copied.stdout.trim().split('\n').at(-1)!) as { sessionId: string }).sessionId;
    const recordC = await rig.readSession(gamma);
    expect(recordC.runs[0]!.status).toBe('completed');
    expect(recordC.worktree).toMatchObject({ repository: repo, branch: `ow/${gamma}`, baseCommit: main });
    expect(await readFile(join(recordC.worktree!.path, 'notes.txt'), 'utf8')).toBe('untracked\n');
    expect(await readFile(join(recordC.worktree!.path, 'feature.txt'), 'utf8')).toBe('gamma\n');
    expect(await readFile(join(repo, 'notes.txt'), 'utf8')).toBe('untracked\n');
    expect(existsSync(join(repo, 'feature.txt'))).toBe(false);

    // With --no-worktree they contradict: a usage error, no session.
    const contradiction = await rig.run(['run', '--no-worktree', '--branch', 'other', '-w', repo, 'write alpha']);
    expect(contradiction.exitCode).toBe(2);
    expect(contradiction.stderr).toContain('--branch only apply with a worktree, not with --no-worktree');
    expect(await rig.sessionIds()).toHaveLength(3);
    expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
  }, 300_000);
});
