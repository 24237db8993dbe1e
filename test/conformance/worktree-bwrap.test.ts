import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { git, initRepo } from '../support/git-repo.js';
import { CliRigs } from '../support/one-works-cli.js';
import type { RecordedRequest, StaticStep } from '../support/scripted-model.js';
import { executeStep } from './orchestrator-rig.js';
import { waitForNoProcesses } from '../support/rig-processes.js';

// How long the orchestrator may take to close an agent after the turn the command followed.
const AGENT_CLOSE_MS = 15_000;

// A worktree session under `sandbox: bwrap`: the agent writes and commits in its worktree (git
// writes the worktree's admin dir, objects, its own branch's ref and reflog), while the user's
// checkout, other sessions' branches (loose or packed) and the rest of the repository's .git
// stay read-only.

const rigs = new CliRigs();
afterEach(() => rigs.dispose());

describe('worktree session under bwrap', () => {
  it("commits on its own branch and cannot move another session's branch; the main checkout, its HEAD and index and the repository config stay read-only", async () => {
    const attempts = (repo: string): string =>
      [
        "printf 'x\\n' > f.txt",
        'git add f.txt',
        'echo "add-rc=$?"',
        `echo evil > ${repo}/a.txt; echo "checkout-rc=$?"`,
        `echo evil > ${repo}/.git/HEAD; echo "head-rc=$?"`,
        `echo evil >> ${repo}/.git/config; echo "config-rc=$?"`,
        `echo evil > ${repo}/.git/refs/heads/main; echo "main-rc=$?"`,
      ].join('; ');
    // The identity is the repository's (initRepo). droid 0.225.2's Droid-Shield wants a commit alone in its Execute call, with `git -C <literal path>`:
    // the worktree's path is in droid's system prompt (its working directory).
    const commit = (request: RecordedRequest): StaticStep => {
      const worktree = /\/[^\s"'\\]*\/worktrees\/s-[0-9a-f]+/.exec(JSON.stringify(request.body))?.[0] ?? 'worktree-not-found';
      return executeStep('wt_bwrap_2', `git -C ${worktree} commit -qm agent`);
    };
    // The repository's path is known once the rig exists; the steps read it when droid asks.
    let repoPath = '';
    // After its commit, the agent tries to move other sessions' branches (one loose, one only
    // in packed-refs) to its own commit: through git, and by writing the ref file directly.
    const moveOthers = (repo: string): string[] => [
      'git update-ref refs/heads/ow/s-loose HEAD; echo "loose-rc=$?"',
      'git update-ref refs/heads/ow/s-packed HEAD; echo "packed-rc=$?"',
      `git rev-parse HEAD > ${repo}/.git/refs/heads/ow/s-loose; echo "direct-rc=$?"`,
    ];
    const model = await rigs.model({
      steps: [
        () => executeStep('wt_bwrap_1', attempts(repoPath)),
        commit,
        () => executeStep('wt_bwrap_3', moveOthers(repoPath).join('; ')),
        { text: 'Tried.' },
      ],
    });
    const rig = await rigs.create({ baseUrl: model.baseUrl, sandbox: 'bwrap' });
    repoPath = rig.workspace;
    await initRepo(repoPath, { 'a.txt': 'one\n' });
    // Two other sessions' branches: one packed (packed-refs only), one loose.
    await git(repoPath, 'branch', 'ow/s-packed');
    await git(repoPath, 'pack-refs', '--all');
    await git(repoPath, 'branch', 'ow/s-loose');
    const head = await readFile(join(repoPath, '.git/HEAD'), 'utf8');
    const config = await readFile(join(repoPath, '.git/config'), 'utf8');
    const main = await git(repoPath, 'rev-parse', 'main');

    // Autonomy high: the policy allows the scripted commands (droid asks One Works before each).
    const result = await rig.run(['run', '--worktree', '-a', 'high', '-w', repoPath, 'commit something']);
    const [id] = await rig.sessionIds();
    expect(
      result.exitCode,
      `${result.stderr}\n${JSON.stringify((await rig.readSession(id!)).runs)}\n${(await rig.readEventLines(id!)).filter((l) => /error|log/.test(l)).join('\n')}`,
    ).toBe(0);
    const events = await rig.readEvents(id!);
    const output = events
      .flatMap((e) =>
        e.type === 'tool.result' ? [e.output] : e.type === 'tool.call' && e.phase === 'input' ? [JSON.stringify(e.input)] : [],
      )
      .join('\n');
    expect(output).toContain('add-rc=0');
    for (const name of ['head', 'config', 'main']) expect(output).toMatch(new RegExp(`${name}-rc=[1-9]`));
    // The rig's repository lies under /tmp, which is private in the sandbox: the write to a.txt
    // landed there (checkout-rc=0), never in the real checkout.
    expect(await readFile(join(repoPath, 'a.txt'), 'utf8')).toBe('one\n');
    expect(await readFile(join(repoPath, '.git/HEAD'), 'utf8')).toBe(head);
    expect(await readFile(join(repoPath, '.git/config'), 'utf8')).toBe(config);
    expect(await git(repoPath, 'rev-parse', 'main')).toBe(main);
    expect(await git(repoPath, 'log', '-1', '--format=%an %s', `ow/${id}`), output).toBe('Test agent');
    expect(existsSync(join(repoPath, 'f.txt'))).toBe(false);
    // Only its own branch moved: the others still point at main, whatever the agent tried.
    for (const name of ['loose', 'packed', 'direct']) expect(output).toMatch(new RegExp(`${name}-rc=[1-9]`));
    expect(await git(repoPath, 'rev-parse', 'ow/s-loose')).toBe(main);
    expect(await git(repoPath, 'rev-parse', 'ow/s-packed')).toBe(main);
    expect(await git(repoPath, 'rev-parse', `ow/${id}`)).not.toBe(main);

    const diff = await rig.run(['--json', 'diff', '--stat', id!]);
    expect(JSON.parse(diff.stdout)).toMatchObject({ files: [{ path: 'f.txt', added: 1, removed: 0 }] });
    // `run` exits once its turn has settled; the orchestrator closes the agent right after (bounded).
    expect(await waitForNoProcesses(() => rig.processes(), AGENT_CLOSE_MS)).toEqual([]);
  }, 300_000);
});
