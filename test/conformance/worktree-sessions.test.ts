import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { git, hashTree, initRepo } from '../support/git-repo.js';
import { CliRigs } from '../support/one-works-cli.js';
import { waitForNoProcesses } from '../support/rig-processes.js';
import { byPrompt } from './orchestrator-rig.js';
import { writeWord } from './worktree-rig.js';

// Two worktree sessions of the real droid on one repository, with real git: they run at the
// same time, each writes only its own worktree, the user's checkout stays byte-identical, and
// diff, merge (then a refused conflicting merge) and discard do what they say.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

// droid 0.225.2's Execute supervisor polls every 2 s whether droid lives, then kills its group.
const TOOL_LINGER_MS = 10_000;
// What a worktree session may add to the repository's .git: its admin dir, objects, its branch's ref and reflog.
const SESSION_GIT_PARTS = ['.git/worktrees', '.git/objects', '.git/refs', '.git/logs'];

const sessionIdOf = (stdout: string): string => stdout.trim().split('\n').at(-1)!;

describe('worktree sessions with the real droid and real git', () => {
  it('run in parallel in their own worktrees; diff, merge, a refused conflicting merge and discard', async () => {
    const model = await rigs.model({ steps: byPrompt({ 'write alpha': writeWord('alpha'), 'write beta': writeWord('beta') }) });
    const rig = await rigs.create({ baseUrl: model.baseUrl });
    const repo = rig.workspace;
    await initRepo(repo, { 'a.txt': 'one\n' });
    // The user's own work in progress: a staged edit and an untracked file.
    await writeFile(join(repo, 'a.txt'), 'one\nmine\n');
    await git(repo, 'add', 'a.txt');
    await writeFile(join(repo, 'notes.txt'), 'untracked\n');
    const main = await git(repo, 'rev-parse', 'main');
    const before = await hashTree(repo, SESSION_GIT_PARTS);

    const [first, second] = await Promise.all([
      // Autonomy high: the policy allows the scripted commands (droid asks One Works before each).
      rig.run(['run', '--worktree', '--detach', '-a', 'high', '-w', repo, 'write alpha']),
      rig.run(['run', '--worktree', '--detach', '-a', 'high', '-w', repo, 'write beta']),
    ]);
    expect(first.exitCode, first.stderr).toBe(0);
    expect(second.exitCode, second.stderr).toBe(0);
    const [alpha, beta] = [sessionIdOf(first.stdout), sessionIdOf(second.stdout)];
    const waited = await rig.run(['wait', alpha, beta, '--timeout', '120']);
    expect(waited.exitCode, waited.stderr).toBe(0);
    // A worktree run tells no intent (its agent must start in the worktree, made at createSession):
    // the server started no agent ahead of it, in the repository or elsewhere.
    expect(await readFile(join(rig.stateDir, 'orchestrator.log'), 'utf8')).not.toContain('intent:');

    const records = await Promise.all([rig.readSession(alpha), rig.readSession(beta)]);
    const [runA, runB] = records.map((record) => record.runs[0]!);
    expect([runA!.status, runB!.status]).toEqual(['completed', 'completed']);
    // They ran at the same time: each started before the other ended.
    const times = records.map((record) => `${record.id}: ${record.runs[0]!.startedAt} → ${record.runs[0]!.endedAt}`).join(', ');
    expect(runA!.startedAt! < runB!.endedAt! && runB!.startedAt! < runA!.endedAt!, times).toBe(true);
    const [wtA, wtB] = records.map((record) => record.worktree!);
    expect(wtA).toMatchObject({ repository: repo, baseBranch: 'main', baseCommit: main, branch: `ow/${alpha}` });
    expect(wtA!.path).toBe(join(rig.stateDir, 'worktrees', alpha));
    expect(records[0]!.workspace).toBe(wtA!.path);
    expect(await readFile(join(wtA!.path, 'feature.txt'), 'utf8')).toBe('alpha\n');
    expect(await readFile(join(wtB!.path, 'feature.txt'), 'utf8')).toBe('beta\n');
    expect(existsSync(join(repo, 'feature.txt'))).toBe(false);
    expect(await hashTree(repo, SESSION_GIT_PARTS)).toBe(before);
    expect(await git(repo, 'rev-parse', 'main')).toBe(main);

    // The exact patch (the runner strips stdout's final newline).
    const diff = await rig.run(['diff', alpha]);
    expect(diff.exitCode, diff.stderr).toBe(0);
    const alphaBlob = (await git(wtA!.path, 'hash-object', 'feature.txt')).slice(0, 7);
    expect(diff.stdout).toBe(
      [
        'diff --git a/feature.txt b/feature.txt',
        'new file mode 100644',
        `index 0000000..${alphaBlob}`,
        '--- /dev/null',
        '+++ b/feature.txt',
        '@@ -0,0 +1 @@',
        '+alpha',
      ].join('\n'),
    );
    const stat = await rig.run(['--json', 'diff', '--stat', alpha]);
    expect(JSON.parse(stat.stdout)).toMatchObject({
      files: [{ path: 'feature.txt', added: 1, removed: 0 }],
      linesAdded: 1,
      linesRemoved: 0,
    });

    // The user's staged edit makes main's checkout dirty: refused, nothing changed.
    const dirty = await rig.run(['merge', alpha]);
    expect(dirty.exitCode).toBe(7);
    expect(dirty.stderr).toMatch(/uncommitted changes/);
    expect(await hashTree(repo, SESSION_GIT_PARTS)).toBe(before);

    await git(repo, 'commit', '-q', '-m', 'user work');
    const merged = await rig.run(['merge', alpha]);
    expect(merged.exitCode, merged.stderr).toBe(0);
    expect(await readFile(join(repo, 'feature.txt'), 'utf8')).toBe('alpha\n');
    expect(await readFile(join(repo, 'notes.txt'), 'utf8')).toBe('untracked\n');
    expect(await git(repo, 'status', '--porcelain')).toBe('?? notes.txt');
    const mergedMain = await git(repo, 'rev-parse', 'main');
    // A merge commit whose second parent snapshots what the agent left uncommitted, on top of its branch.
    expect(await git(repo, 'rev-parse', `${mergedMain}^1`)).toBe(await git(repo, 'rev-parse', 'HEAD@{1}'));
    expect(await git(repo, 'rev-parse', `${mergedMain}^2^`)).toBe(await git(repo, 'rev-parse', `ow/${alpha}`));

    const afterMerge = await hashTree(repo, ['.git/objects']);
    const conflict = await rig.run(['merge', beta]);
    expect(conflict.exitCode).toBe(7);
    expect(conflict.stderr).toMatch(/conflicts in feature\.txt; nothing was changed/);
    expect(await hashTree(repo, ['.git/objects'])).toBe(afterMerge);
    expect(await git(repo, 'rev-parse', 'main')).toBe(mergedMain);

    const discarded = await rig.run(['discard', beta]);
    expect(discarded.exitCode, discarded.stderr).toBe(0);
    expect(existsSync(wtB!.path)).toBe(false);
    expect(existsSync(wtB!.gitDir)).toBe(false);
    expect(await git(repo, 'branch', '--list', `ow/${beta}`)).toBe('');
    expect(await git(repo, 'worktree', 'list', '--porcelain')).not.toContain(wtB!.path);
    expect((await rig.readSession(beta)).worktree?.discardedAt).toBeDefined();
    const refused = await rig.run(['send', beta, 'more']);
    expect(refused.exitCode).toBe(2);
    expect(refused.stderr).toMatch(/worktree was discarded/);
    expect(await waitForNoProcesses(() => rig.processes(), TOOL_LINGER_MS)).toEqual([]);
    // A dozen CLI invocations and two droid turns: minutes on a loaded CI machine.
  }, 400_000);
});
